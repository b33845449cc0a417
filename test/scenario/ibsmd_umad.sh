#!/usr/bin/env bash
# ibsmd and ibsa through --transport umad under the kernel's MAD rules (libfabricsim-umad.so:
# answers only to requests sent with a timeout, ETIMEDOUT returns, one agent per method per
# port), as on hardware. A 648-host fat tree: A master, B standing by and in step (the sync
# over the vendor class), verify PASS; ibsa smp and every ibsa SA query answer, ibsa events
# gets a Report; saquery against ibsmd's SA; kill -9 A and B takes over with the same LIDs
# and the client state, verify PASS. osmtest's flows against ibsmd's SA on a small tree, and
# a 5,184-host tree up through umad.
# Usage: ibsmd_umad.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need saquery
need osmtest
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
export IBSMD_TRANSPORT=umad
start_fabricsim "fattree:radix=36,levels=2" --max-clients 64
items() { grep -hv '^#' "$WORK/state-$1/guid2lid" "$WORK/state-$1/sa-state" 2>/dev/null | sort; }
in_step() { [ -s "$WORK/state-$1/sa-state" ] && [ "$(items "$1")" = "$(items "$2")" ]; }
ibsa() { on_kernel host-9 "$IBSA" --transport umad "$@"; }

start_named_ibsmd A host-1 10 "sweep_interval: 2"
wait_until 120 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up through umad"
grep -q "ibsmd on umad" "$WORK/A.log" || fail "A is not on the umad transport"
verify_passes || fail "A's subnet: $("$FS" verify | tail -2)"
echo "648 hosts up through umad: $(grep -o 'subnet up: [^;]*' "$WORK/A.log" | head -1), verify PASS"
start_named_ibsmd B host-2 5 "sweep_interval: 2"
wait_until 60 grep -q "standing by" "$WORK/B.log" || fail "B does not stand by"

# ibsa through umad: an SMP, every SA query, a service, a subscription that gets a Report
ibsa smp nodeinfo --dr 0,1 >"$WORK/smp.txt" 2>&1 || fail "ibsa smp: $(cat "$WORK/smp.txt")"
grep -Eq "^node_type +2$" "$WORK/smp.txt" || fail "ibsa smp: $(head -5 "$WORK/smp.txt")"
LEAF=$(lid_of leaf-1)
H1=$(lid_of host-1)
H600=$(lid_of host-600)
H5=$(lid_of host-5)
# (mft and informinfo answer an empty table here: no group has members, nobody subscribed)
for q in nodes ports links switches sm mcast guids sl2vl vlarb "lft $LEAF" "paths $H1 $H600" \
	"mpaths $H1,$H5 $H600" "--sm-key 1 pkeys $H600" mft informinfo; do
	# shellcheck disable=SC2086 # the query's words
	ibsa --json $q >"$WORK/q.json" 2>"$WORK/q.err" || fail "ibsa $q: $(cat "$WORK/q.err")"
	case "$q" in mft | informinfo) continue ;; esac
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r, "empty"' \
		"$WORK/q.json" 2>"$WORK/q.err" || fail "ibsa $q answered nothing: $(head -c 300 "$WORK/q.json")"
done
echo "ibsa through umad: smp and 15 SA queries answered"
(cd "$WORK" && SIM_HOST=host-7 LD_PRELOAD=$(kernel_preload "$IBSA") exec "$IBSA" --transport umad \
	--json events --count 1 --timeout 60 >"$WORK/events.json" 2>"$WORK/events.err") &
EV=$!
CLIENTS+=($EV)
subscribed() { ibsa --json informinfo | has qpn; }
wait_until 20 subscribed || fail "ibsa events did not subscribe: $(cat "$WORK/events.err")"
ibsa services add 0x100 --name kept --lease 3600 >/dev/null || fail "ibsa services add"
"$FS" ctl node remove host-40 >/dev/null
wait "$EV" || fail "ibsa events got no Report through umad: $(cat "$WORK/events.err")"
grep -q '"trap":65' "$WORK/events.json" || fail "ibsa events: $(cat "$WORK/events.json")"
"$FS" ctl node add host-40 >/dev/null
echo "ibsa events through umad: the Report of host-40 leaving"
whole() { [ "$(ibsa --json nodes | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" = 702 ]; }
wait_until 30 whole || fail "host-40 did not come back into the SA"

# OpenSM's own SA tools against ibsmd's SA
on_sim host-11 saquery -N >"$WORK/saquery.txt" 2>&1 || fail "saquery: $(tail -3 "$WORK/saquery.txt")"
[ "$(grep -c "NodeRecord dump" "$WORK/saquery.txt")" -ge 648 ] ||
	fail "saquery -N: $(grep -c "NodeRecord dump" "$WORK/saquery.txt") records"
echo "saquery -N against ibsmd's SA through umad: $(grep -c "NodeRecord dump" "$WORK/saquery.txt") NodeRecords"

# the standby takes over through umad
wait_until 30 in_step B A || fail "B's copy is not A's: $(diff <(items A) <(items B) | head -5)"
"$FS" ctl lids | sort >"$WORK/lids.0"
kill -9 "$PID_A"
wait_until 30 grep -q "subnet up" "$WORK/B.log" || fail "B did not take over"
verify_passes || fail "after the takeover: $("$FS" verify | tail -2)"
"$FS" ctl lids | sort >"$WORK/lids.1"
diff -q "$WORK/lids.0" "$WORK/lids.1" >/dev/null || fail "LIDs changed in the takeover"
on_kernel host-12 "$IBSA" --transport umad --json services | has '"kept"' ||
	fail "B's SA lost the service registered with A"
echo "kill -9 A: B took over through umad with the same LIDs and the service, verify PASS"
stop_sims

# osmtest's flows against ibsmd through umad, on a small tree as sa_osmtest.sh runs them
# (validating every PathRecord of the 648-host tree is a 31 MB table)
start_fabricsim "fattree:radix=8,levels=2" --max-clients 16
start_named_ibsmd S host-1 1 "sweep_interval: 0"
wait_until 60 grep -q "subnet up" "$WORK/S.log" || fail "S did not bring the small tree up"
for f in c a s e q; do
	(cd "$WORK" && SIM_HOST=host-2 LD_PRELOAD=$PRELOAD timeout 300 osmtest -f $f \
		-i "$WORK/inventory.dat" -l "$WORK/osmtest-$f.log" >"$WORK/osmtest-$f.out" 2>&1) ||
		fail "osmtest -f $f: $(tail -3 "$WORK/osmtest-$f.out")"
	grep -q PASS "$WORK/osmtest-$f.out" || fail "osmtest -f $f did not pass"
done
echo "osmtest -f c, a, s, e, q against ibsmd's SA through umad: PASS"
stop_sims

# the 5,184-host tree
start_fabricsim "fattree:radix=36,levels=3,hosts=5184" --max-clients 16
on_kernel host-1 "$BUILD/daemon/ibsmd" --transport umad --once --state-dir "$WORK/state-big" \
	>"$WORK/big.out" 2>"$WORK/big.log" || fail "5,184 hosts through umad: $(tail -3 "$WORK/big.log")"
verify_passes || fail "5,184 hosts: $("$FS" verify | tail -2)"
echo "5,184 hosts up through umad: $(cut -d, -f1-3 "$WORK/big.out"), verify PASS"
echo PASS
