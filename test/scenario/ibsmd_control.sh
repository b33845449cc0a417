#!/usr/bin/env bash
# Runtime control, from outside with ibsa on the daemon's control socket: status (text and
# JSON) says MASTER with the fabric's counts, sweeps and phase times, MAD and SA counters,
# and lists the standby, whose own status names its master; sweep light|heavy and reroute
# each add a sweep; loglevel changes what the log shows; watch --follow streams the events
# (a cable pulled and put back) as JSON lines; a bad command is an error (exit
# 1); dump topology lists the same links as ibnetdiscover; dump routes --json holds what the
# switches hold; dump files (and dump_after_sweep) write OpenSM's dump files, from which
# ibdmchk reaches the same credit-loop verdict as fabricsim verify on a torus, routed by
# minhop (loops) and updn (none). The socket is 0600 and refuses other users.
# Usage: ibsmd_control.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need ibnetdiscover
need ibdmchk
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
ctl() { "$IBSA" --control "$WORK/control-A" "$@"; }
json() { ctl --json status >"$WORK/status.json" && python3 -c "import json,sys; r=json.load(open('$WORK/status.json')); sys.exit(0 if ($1) else 1)"; }

start_fabricsim "torus:dims=4x4x4,hosts=2"
start_named_ibsmd A host-1 10 "routing_engine: minhop" "sweep_interval: 1" \
	"dump_dir: $WORK/dump" "dump_after_sweep: true" "control_socket: $WORK/control-A"
start_named_ibsmd B host-2 1 "sweep_interval: 0" "control_socket: $WORK/control-B"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
wait_until 30 json 'r["state"]=="MASTER" and r["subnet"]["up"]' || fail "status: $(cat "$WORK/status.json")"
n=$("$FS" ctl lids | wc -l)
json "r['subnet']['nodes']==192 and r['subnet']['switches']==64 and r['subnet']['lids']==$n and r['sweeps']['count']>=1 and r['sweeps']['last']['total']>0 and r['mads']['sent']>0 and r['subnet']['engine']=='minhop'" ||
	fail "status does not match the fabric: $(cat "$WORK/status.json")"
wait_until 30 json "any(s['state']=='STANDBY' and s['priority']==1 for s in r['sms'])" ||
	fail "A's status does not list the standby B: $(cat "$WORK/status.json")"
bstat() {
	"$IBSA" --control "$WORK/control-B" --json status >"$WORK/b.json" &&
		python3 - "$WORK/b.json" "$(lid_of host-1)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["state"] == "STANDBY" and r["master"]["lid"] == int(sys.argv[2]), r
PY
}
wait_until 20 bstat || fail "B's status: $(cat "$WORK/b.json")"
ctl status | has "^state: *MASTER, priority 10" || fail "text status: $(ctl status)"
echo "status: MASTER with 192 nodes, $n LIDs, the standby listed; B says STANDBY under A: ok"

# sweeps on request
count() { ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sweeps"]["count"])'; }
swept_past() { [ "$(count)" -gt "$1" ]; }
c0=$(count)
ctl sweep heavy >/dev/null || fail "sweep heavy"
wait_until 20 swept_past "$c0" || fail "sweep heavy did not sweep"
c1=$(count)
ctl reroute | has "rerouting" || fail "reroute"
wait_until 20 swept_past "$c1" || fail "reroute did not sweep"
ctl sweep light | has "light sweep" || fail "sweep light"
rc=0
ctl sweep sideways 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] && grep -q "^error: sweep light or sweep heavy" "$WORK/err" || fail "a bad sweep: rc $rc, $(cat "$WORK/err")"
rc=0
"$IBSA" --control "$WORK/control-B" sweep heavy 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not master" "$WORK/err" || fail "a standby swept: rc $rc"
[ "$(ctl loglevel)" = notice ] || fail "loglevel: $(ctl loglevel)"
grep -q " info lids:" "$WORK/A.log" && fail "info lines at notice"
ctl loglevel info >/dev/null
ctl sweep heavy >/dev/null
wait_until 10 grep -q " info lids:" "$WORK/A.log" || fail "loglevel info shows no info lines"
ctl loglevel notice >/dev/null
echo "sweep heavy, reroute, sweep light, loglevel; errors for a bad sweep and a standby: ok"

# the event stream, as a site's script reads it: the recent events, then each as it happens
ctl watch --follow >"$WORK/watch.out" 2>&1 &
WATCH=$!
PIDS+=($WATCH)
wait_until 10 grep -q '"event":"subnet_up"' "$WORK/watch.out" ||
	fail "watch --follow: no subnet_up among the recent events: $(head -c 600 "$WORK/watch.out")"
grep -q '"event":"sm_state",.*"state":"MASTER"' "$WORK/watch.out" ||
	fail "watch --follow: no sm_state MASTER: $(head -c 600 "$WORK/watch.out")"
"$FS" ctl link down host-7 1 >/dev/null
wait_until 20 grep -q '"event":"link_down"' "$WORK/watch.out" ||
	fail "watch --follow: host-7's cable pulled, no link_down: $(tail -c 600 "$WORK/watch.out")"
"$FS" ctl link up host-7 1 >/dev/null
wait_until 20 grep -q '"event":"link_up"' "$WORK/watch.out" ||
	fail "watch --follow: host-7's cable back, no link_up: $(tail -c 600 "$WORK/watch.out")"
kill "$WATCH"
python3 - "$WORK/watch.out" <<'PY' || fail "watch --follow's lines: $(head -c 600 "$WORK/watch.out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
seqs = [l["seq"] for l in lines]
assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
down = [l for l in lines if l["event"] == "link_down"][0]
assert down["level"] == "notice" and down["time"].endswith("Z") and down["fields"], down
PY
ctl watch | grep -q '"event":"link_up"' || fail "watch (recent): no link_up: $(ctl watch | tail -2)"
echo "watch --follow: subnet_up, sm_state, then link_down and link_up as they happened, JSON lines in order: ok"

# OpenSM's console questions
g7=$("$FS" ctl lids | awk '$4 == "host-7" { print $1 }')
ctl --json querylid "$(lid_of host-7)" >"$WORK/q.json" || fail "querylid: $(cat "$WORK/q.json")"
python3 - "$WORK/q.json" "$g7" "$(lid_of host-7)" <<'PY' || fail "querylid: $(cat "$WORK/q.json")"
import json, sys
q = json.load(open(sys.argv[1]))
assert int(q["port_guid"], 16) == int(sys.argv[2], 16) and q["lid"] == int(sys.argv[3]), q
assert q["state"] == "ACTIVE" and q["type"] == "CA" and q["port"] == 1 and "peer" in q, q
PY
rc=0
ctl querylid 0xbfff 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] && grep -q "no port holds LID" "$WORK/err" || fail "querylid of nobody's LID: rc $rc $(cat "$WORK/err")"
# the cable trains to 1x in place (no state change, as a width downgrade on HDR and later):
# portstatus tells the SM's model, which a heavy sweep reads afresh
"$FS" ctl train host-7 1 1xHDR >/dev/null
ctl sweep heavy >/dev/null
reduced() { ctl portstatus ca | grep -q '^reduced: "host-7 .* port 1 runs 1x'; }
wait_until 30 reduced || fail "portstatus does not list host-7's narrowed link: $(ctl portstatus ca)"
ctl --json portstatus >"$WORK/ps.json"
python3 - "$WORK/ps.json" <<'PY' || fail "portstatus: $(cat "$WORK/ps.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["linked"] == p["active"] > 0 and len(p["reduced"]) == 2, p  # both ends of the cable
assert sum(p["rates"].values()) == p["linked"], p
PY
"$FS" ctl train host-7 1 none >/dev/null
ctl sweep heavy >/dev/null
ctl --json switchbalance verbose >"$WORK/sb.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r) == 64 and all(len(s["ports"]) == 6 for s in r), r[:2]' 	"$WORK/sb.json" || fail "switchbalance verbose: $(head -c 400 "$WORK/sb.json")"
ctl lidbalance | grep -q "(LMC 0): nothing to balance" || fail "lidbalance at LMC 0: $(ctl lidbalance)"
ctl update-desc | grep -q "^192 nodes asked" || fail "update-desc: $(ctl update-desc)"
echo "querylid, portstatus (a cable trained to 1x listed), switchbalance, lidbalance, update-desc: ok"

# dump topology: the links ibnetdiscover finds
ctl dump topology >"$WORK/ours.topo"
on_sim host-3 ibnetdiscover >"$WORK/theirs.topo" 2>/dev/null || fail "ibnetdiscover"
links() { # the links of a topology file, by GUID and port, each once
	python3 - "$1" <<'PY'
import re, sys
links = set()
node = None
for line in open(sys.argv[1]):
    m = re.match(r'(switchguid|caguid)=0x([0-9a-f]+)', line)
    if m:
        node = int(m.group(2), 16)
        continue
    m = re.match(r'\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\]', line)
    if m and node is not None:
        a, b = (node, int(m.group(1))), (int(m.group(2), 16), int(m.group(3)))
        links.add(tuple(sorted((a, b))))
for l in sorted(links):
    print(l)
PY
}
links "$WORK/ours.topo" >"$WORK/ours.links"
links "$WORK/theirs.topo" >"$WORK/theirs.links"
[ "$(wc -l <"$WORK/ours.links")" -gt 100 ] || fail "dump topology has $(wc -l <"$WORK/ours.links") links"
diff "$WORK/ours.links" "$WORK/theirs.links" >/dev/null ||
	fail "dump topology and ibnetdiscover differ: $(diff "$WORK/ours.links" "$WORK/theirs.links" | head -5)"
ctl --json dump topology >"$WORK/topo.json"
python3 - "$WORK/topo.json" "$(wc -l <"$WORK/ours.links")" <<'PY' || fail "dump topology --json"
import json, sys
nodes = json.load(open(sys.argv[1]))
assert len(nodes) == 192, len(nodes)
ends = sum(len(n["links"]) for n in nodes)
assert ends == 2 * int(sys.argv[2]), (ends, sys.argv[2])
PY
echo "dump topology: the same $(wc -l <"$WORK/ours.links") links as ibnetdiscover, and as JSON: ok"

# dump routes: what the switches hold
ctl --json dump routes >"$WORK/routes.json"
sw=$(python3 -c "import json; print(json.load(open('$WORK/routes.json'))[0]['guid'])")
# ibroute finds the switch through the SA: under load a query may time out, so try again
ibroute_read() { on_sim host-3 ibroute -G "$sw" >"$WORK/ibroute.out" 2>/dev/null && grep -q '^0x' "$WORK/ibroute.out"; }
wait_until 30 ibroute_read || fail "ibroute could not read switch $sw"
python3 - "$WORK/routes.json" "$sw" "$WORK/ibroute.out" <<'PY' || fail "dump routes differs from ibroute"
import json, re, sys
sw = [s for s in json.load(open(sys.argv[1])) if s["guid"] == sys.argv[2]][0]
ours = {lid: port for lid, port in sw["lft"]}
hw = {}
for line in open(sys.argv[3]):
    m = re.match(r'0x([0-9a-f]+) (\d+) ', line)
    if m:
        hw[int(m.group(1), 16)] = int(m.group(2))
# ibroute lists the LIDs below LinearFDBTop, not the top one itself (which IBA, ibsmd and
# OpenSM count in): compare below it
top = max(ours)
ours.pop(top)
hw.pop(top, None)
assert hw and ours == hw, f"{len(ours)} ours, {len(hw)} on the switch, differ: {set(ours.items()) ^ set(hw.items())}"
PY
echo "dump routes --json: switch $sw's $(python3 -c "import json; print(len(json.load(open('$WORK/routes.json'))[0]['lft']))") entries as ibroute reads them: ok"

# OpenSM's dump files, read by ibdmchk: the same verdict as fabricsim verify
verdict() { # EXPECTED
	local d="$WORK/dump" ib=none fs=none
	(cd "$d" && timeout 300 ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs \
		>"$d/ibdmchk.out" 2>&1) 2>/dev/null || true # ibdmchk crashes on exit (ibutils bug)
	grep -q "Analyzing Fabric for Credit Loops" "$d/ibdmchk.out" ||
		fail "ibdmchk read nothing: $(grep -- '-E-' "$d/ibdmchk.out" | head -3)"
	grep -q "Defined 192/192 systems/nodes" "$d/ibdmchk.out" || fail "ibdmchk: $(grep Defined "$d/ibdmchk.out")"
	grep -q "credit loops in routing" "$d/ibdmchk.out" && ib=loop
	"$FS" verify --json >"$d/verify.json" || true
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["credit_loops"]["loop"] else 1)' \
		"$d/verify.json" && fs=loop
	[ "$ib" = "$fs" ] && [ "$fs" = "$1" ] || fail "ibdmchk says $ib, fabricsim $fs, expected $1"
	echo "  ibdmchk and fabricsim verify: $fs"
}
[ -s "$WORK/dump/opensm.fdbs" ] || fail "dump_after_sweep wrote no opensm.fdbs"
verdict loop
sed -i 's/^routing_engine: minhop/routing_engine: updn/' "$WORK/A.yaml"
rm -rf "$WORK/dump"
kill -HUP "$PID_A"
wait_until 30 test -s "$WORK/dump/opensm.fdbs" || fail "no dump after the reload's sweep"
wait_until 10 json "r['subnet']['engine']=='updn'" || fail "not rerouted by updn"
ctl dump files | has "written to $WORK/dump" || fail "dump files"
verdict none
echo "dump files: ibdmchk reads them and agrees with fabricsim verify (minhop: loop, updn: none): ok"

# only root (and control_group) may talk to it
[ "$(stat -c %a "$WORK/control-A")" = 600 ] || fail "socket mode $(stat -c %a "$WORK/control-A")"
chmod 755 "$WORK"
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$IBSA" --control "$WORK/control-A" status \
	>/dev/null 2>"$WORK/err" || rc=$?
chmod 700 "$WORK"
[ "$rc" = 3 ] && grep -q "Permission denied" "$WORK/err" || fail "nobody got in: rc $rc $(cat "$WORK/err")"
echo "socket 0600; nobody is refused: ok"

# priority: the standby raised above the master is handed the subnet at the next poll
"$IBSA" --control "$WORK/control-B" priority 12 | grep -qx 12 || fail "priority 12 on B"
b_master() { "$IBSA" --control "$WORK/control-B" --json status |
	python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["state"] == "MASTER" else 1)'; }
wait_until 30 b_master || fail "B raised to priority 12 did not become master"
grep -q "handed over" "$WORK/A.log" || fail "A did not log the handover"
echo "priority 12 on the standby: A handed the subnet over to it: ok"
