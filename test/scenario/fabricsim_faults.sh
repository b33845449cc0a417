#!/usr/bin/env bash
# fabricsim at run time: many clients at once, faults from the control socket and from a
# script, traps that a running OpenSM acts on, loss and latency.
# Usage: fabricsim_faults.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=12,levels=2" # 72 hosts, 12 leaves, 6 spines

verify_ok() {
	"$FS" verify --json >"$WORK/v.json" || true
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["ok"] else 1)' "$WORK/v.json"
}

wait_for() { wait_until "$@"; } # SECONDS COMMAND...: until the command succeeds (scaled)

start_fabricsim "$SPEC"

# 1. seventy clients at once, each on its own host (ibsim stops at ten)
for i in $(seq 1 70); do
	"$IBSA" --transport sim --sim-node "host-$i" --timeout 2000 smp nodeinfo --dr 0,1 \
		>"$WORK/client-$i.out" 2>&1 &
	CLIENTS+=($!)
done
for p in "${CLIENTS[@]}"; do
	wait "$p" || fail "a client failed: $(cat "$WORK"/client-*.out | grep -v '^[a-z#]' | head -3)"
done
grep -l "node_type *2" "$WORK"/client-*.out | wc -l | has -x 70 || fail "not every client got its leaf"
echo "70 simultaneous clients: ok"

# 2. a running OpenSM (not --once) brings the subnet up; it sits on a host (the default first
# node is spine-1, which step 4 takes away)
need opensm
OSM="$WORK/osm"
mkdir -p "$OSM"
(cd "$OSM" && SIM_HOST=host-72 OSM_TMP_DIR=$OSM OSM_CACHE_DIR=$OSM LD_PRELOAD=$UMAD2SIM \
	exec opensm -f "$OSM/opensm.log" -d 2 -s 2 >"$OSM/stdout.log" 2>&1) &
PIDS+=($!)
wait_for 60 grep -qs "SUBNET UP" "$OSM/opensm.log" || fail "OpenSM did not come up"
wait_for 30 verify_ok || fail "verify after bring-up: $(cat "$WORK/v.json")"
echo "OpenSM up, verify passes"

# 3. pull a host's cable: the leaf sends trap 128, OpenSM represses it and resweeps
before=$(fabricsim_ctl stats | sed -n 's/.* traps \([0-9]*\).*/\1/p')
fabricsim_ctl link down leaf-1 1 >/dev/null
wait_for 30 grep -q "Received Generic Notice type:1 num:128" "$OSM/opensm.log" ||
	fail "OpenSM never saw trap 128"
after=$(fabricsim_ctl stats | sed -n 's/.* traps \([0-9]*\).*/\1/p')
[ "$after" -gt "$before" ] || fail "no trap counted"
fabricsim_ctl port leaf-1 1 | has "state DOWN" || fail "port not down"
# the subnet without host-1 is consistent again after OpenSM's sweep
wait_for 30 verify_ok || fail "verify after a link loss: $(head -c 600 "$WORK/v.json")"
# put it back: OpenSM brings the port to ACTIVE again
fabricsim_ctl link up leaf-1 1 >/dev/null
wait_for 30 sh -c "'$FS' ctl port leaf-1 1 | grep -q 'state ACTIVE'" || fail "port did not come back"
wait_for 30 verify_ok || fail "verify after the link returned"
echo "link down/up with trap 128: ok"

# 4. a whole spine switch goes away and comes back
fabricsim_ctl node remove spine-1 >/dev/null
wait_for 60 verify_ok || fail "verify without spine-1: $(head -c 600 "$WORK/v.json")"
fabricsim_ctl node add spine-1 >/dev/null
wait_for 60 sh -c "'$FS' ctl port spine-1 1 | grep -q 'state ACTIVE'" || fail "spine-1 not back"
wait_for 60 verify_ok || fail "verify with spine-1 back"
echo "switch removal and return: ok"

# 5. loss: with 30% of MADs lost, retries still get answers, and losses are counted
fabricsim_ctl drop 30 >/dev/null
for i in $(seq 1 10); do
	"$IBSA" --transport sim --timeout 100 --retries 10 smp nodedesc --dr 0,1,1 >/dev/null ||
		fail "a query failed despite retries under 30% loss"
done
fabricsim_ctl drop 0 >/dev/null
fabricsim_ctl stats | grep -Eq "lost [1-9]" || fail "no loss counted"
echo "30% loss: ok"

# 6. latency: 1 ms per hop and 2 ms per SMA makes a 2-hop query take at least 6 ms
fabricsim_ctl latency 1000 2000 >/dev/null
t0=$(date +%s%N)
"$BUILD/bench/mad_rate" -n 20 -w 1 -r 0,1,1 >/dev/null || fail "mad_rate failed"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge 120 ] || fail "20 two-hop queries took ${ms} ms, expected at least 120"
fabricsim_ctl latency 0 0 >/dev/null
echo "latency model: 20 queries in ${ms} ms: ok"

# 7. a script file drives the same faults
cat >"$WORK/faults.script" <<'SCRIPT'
# pull a spine link, wait, put it back
link down spine-2 3
sleep 0.5
link up spine-2 3
SCRIPT
stop_sims
start_fabricsim "$SPEC" --script "$WORK/faults.script"
wait_for 10 grep -q "script: link up spine-2 3" "$WORK/fabricsim.log" || fail "script did not run"
grep -q "script: link down spine-2 3" "$WORK/fabricsim.log" || fail "script order"
echo "fault script: ok"

# 8. nonsense on the control socket is refused, the simulator keeps serving
fabricsim_ctl link sideways leaf-1 1 >/dev/null && fail "bad command accepted"
fabricsim_ctl node remove no-such-node >/dev/null && fail "unknown node accepted"
"$IBSA" --transport sim smp nodeinfo >/dev/null || fail "simulator stopped serving"
echo "fabricsim faults: ok"
