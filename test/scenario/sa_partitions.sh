#!/usr/bin/env bash
# Tenants isolated by partitions: the default partition made limited for everyone (the SM
# stays a full member), host-1 and host-2 in 0x8001, host-3 and host-4 in 0x8002. A
# requester sees only the ports it shares a partition with: host-1 gets NodeRecords,
# PortInfoRecords and paths for host-2 (on P_Key 0x8001) but none for host-3; the SM_Key
# shows everything. The leaf port facing host-1 holds host-1's P_Keys and enforces them
# (smpquery), uplinks do not, and the SA lists that port's table.
# Usage: sa_partitions.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
cat >"$WORK/ibsmd.yaml" <<'YAML'
partitions:
  - name: default
    pkey: 0x7fff
    membership: limited
    members: [all, all_switches: full]
  - name: tenant-a
    pkey: 0x8001
    sl: 3
    members: [0x100001, 0x100003]
  - name: tenant-b
    pkey: 0x8002
    members: [0x100005, 0x100007]
YAML
start_fabricsim "fattree:radix=8,levels=2"
# leaf-2's firmware takes no P_Key tables on its ports (checked at the end)
"$BUILD/test/fabricsim/fabricsim" ctl refuse leaf-2 0x16 >/dev/null
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml"
as() { local h=$1; shift; SIM_HOST=$h "$IBSA" --transport sim "$@"; }

as host-1 --json nodes >"$WORK/nodes.json" || fail "ibsa nodes"
as host-1 --json ports >"$WORK/ports.json" || fail "ibsa ports"
as host-1 --sm-key 1 --json nodes >"$WORK/all.json" || fail "ibsa nodes --sm-key"
python3 - "$WORK/nodes.json" "$WORK/ports.json" "$WORK/all.json" <<'PY' || fail "visibility"
import json, sys
nodes = {r["desc"]["desc"] for r in json.load(open(sys.argv[1]))}
hosts = {n for n in nodes if n.startswith("host-")}
assert hosts == {"host-1 HCA-1", "host-2 HCA-1", "host-32 HCA-1"}, f"host-1 sees {sorted(hosts)}"
assert any(n.startswith("leaf-") for n in nodes), "switches hidden"
allnodes = json.load(open(sys.argv[3]))
assert len(allnodes) == 44, f"with the SM_Key: {len(allnodes)} nodes"
ports = json.load(open(sys.argv[2]))
assert len(ports) < 140, f"host-1 sees all {len(ports)} ports"
PY
echo "host-1 sees host-2, the SM and the switches, not host-3; the SM_Key sees all: ok"
as host-1 --json paths "host-1 HCA-1" "host-2 HCA-1" >"$WORK/p12.json" || fail "no path host-1 -> host-2"
grep -q '"pkey":"0x8001"' "$WORK/p12.json" || fail "path host-1 -> host-2 not on 0x8001: $(cat "$WORK/p12.json")"
grep -q '"sl":3' "$WORK/p12.json" || fail "path host-1 -> host-2 without tenant-a's SL 3: $(cat "$WORK/p12.json")"
lid3=$("$BUILD/test/fabricsim/fabricsim" ctl lids | awk '$4 == "host-3" { print $2 }')
out=$(as host-1 --json paths "host-1 HCA-1" "$lid3" 2>&1) && fail "host-1 got a path to host-3: $out"
echo "paths within a tenant (P_Key 0x8001, its SL 3), none across: ok"
check_verify 'r["ok"]' >/dev/null || fail "fabricsim verify"

# Reports of ports coming and going (traps 64/65) only about ports the subscriber shares a
# partition with: host-1 (tenant-a) hears of host-2 (tenant-a), never of host-3 (tenant-b).
# Before, every subscriber heard of every tenant's ports.
FS="$BUILD/test/fabricsim/fabricsim"
(SIM_HOST=host-1 exec "$IBSA" --transport sim --json events --count 1 --timeout 60 \
	>"$WORK/events.json" 2>"$WORK/events.err") &
EV=$!
PIDS+=($EV)
nsubs() { as host-1 "$@" --json informinfo | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
nsubs_are() { [ "$(nsubs --sm-key 1)" = "$1" ]; }
wait_until 10 nsubs_are 2 || fail "host-1's subscriptions are not listed"
# host-3's subscriptions would name host-3: tenant-a does not list them
(SIM_HOST=host-3 exec "$IBSA" --transport sim --json events --timeout 60 >"$WORK/events-3.json" 2>&1) &
PIDS+=($!)
wait_until 10 nsubs_are 4 || fail "host-3's subscriptions are not listed"
n=$(nsubs)
[ "$n" = 2 ] || fail "host-1 lists $n InformInfoRecords, want its own 2 (host-3's are tenant-b's)"
# host-3 (tenant-b) hears of host-4 (fe80::10:7) coming and going: the Reports host-1 would
# have had went out with those
heard_3() { grep -q "\"trap\":$1,.*\"gid\":\"fe80::10:7\"" "$WORK/events-3.json"; }
"$FS" ctl node remove host-4 >/dev/null # tenant-b: host-1 must not hear of it
wait_until 20 heard_3 65 || fail "host-3 did not hear of host-4 leaving: $(cat "$WORK/events-3.json")"
"$FS" ctl node add host-4 >/dev/null
wait_until 20 heard_3 64 || fail "host-3 did not hear of host-4 coming back: $(cat "$WORK/events-3.json")"
[ ! -s "$WORK/events.json" ] || fail "host-1 heard of tenant-b's host-4: $(cat "$WORK/events.json")"
"$FS" ctl node remove host-2 >/dev/null # tenant-a: host-1 hears of it
wait "$EV" || fail "host-1 did not hear of host-2 leaving: $(cat "$WORK/events.json" "$WORK/events.err")"
python3 - "$WORK/events.json" <<'PY' || fail "Reports to host-1"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [(e["trap"], e["gid"]) for e in ev] == [(65, "fe80::10:3")], f"Reports {ev} (host-2 is fe80::10:3)"
PY
"$FS" ctl node add host-2 >/dev/null
wait_until 30 verify_passes || fail "host-2 did not come back"
echo "Reports of ports coming and going: host-1 hears of tenant-a's host-2, not of tenant-b's host-4; InformInfoRecords of tenant-b hidden: ok"

# partition enforcement at the edge, read from the switches with smpquery: the leaf port
# facing host-1 holds host-1's keys (limited default, tenant-a) and enforces them both ways;
# an uplink, where every partition passes, enforces nothing
need smpquery
read -r leaf lport < <("$FS" ctl port host-1 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
llid=$("$FS" ctl lids | awk -v n="$leaf" '$4 == n { print $2 }')
# a read lost on a loaded machine is tried again, twice at most
smp() { on_sim host-1 smpquery "$@" || on_sim host-1 smpquery "$@" || on_sim host-1 smpquery "$@"; }
keys=$(smp pkeys "$llid" "$lport") || fail "smpquery pkeys $llid $lport"
grep -q '0: 0x7fff 0x8001 0x0000' <<<"$keys" || fail "$leaf port $lport holds: $keys"
pi=$(smp portinfo "$llid" "$lport") || fail "smpquery portinfo $llid $lport"
grep -q 'PartEnforceInb:\.*1' <<<"$pi" && grep -q 'PartEnforceOutb:\.*1' <<<"$pi" ||
	fail "$leaf port $lport does not enforce: $(grep PartEnforce <<<"$pi")"
up=$(smp portinfo "$llid" 5) || fail "smpquery portinfo $llid 5"
grep -q 'PartEnforceInb:\.*0' <<<"$up" && grep -q 'PartEnforceOutb:\.*0' <<<"$up" ||
	fail "$leaf uplink 5 enforces: $(grep PartEnforce <<<"$up")"
as host-1 --sm-key 1 --json pkeys >"$WORK/pkeys.json" || fail "ibsa pkeys"
python3 - "$WORK/pkeys.json" "$llid" "$lport" <<'PY' || fail "SA P_Key records of switch ports"
import json, sys
recs = json.load(open(sys.argv[1]))
lid, port = int(sys.argv[2]), int(sys.argv[3])
r = [x for x in recs if x["lid"] == lid and x["port_num"] == port and x["block_num"] == 0]
assert r and r[0]["table"]["pkey"][:3] == ["0x7fff", "0x8001", "0x0000"], f"SA: {r}"
PY
echo "$leaf port $lport (host-1) holds 0x7fff 0x8001 and enforces them, uplinks do not; the SA says the same: ok"

# a switch that refuses P_Key tables: its host ports go without enforcement, each refusal is
# warned about once, and a later sweep (a host's link flaps) does not ask again
for p in 1 2 3 4; do
	l2=$("$FS" ctl lids | awk '$4 == "leaf-2" { print $2 }')
	smp portinfo "$l2" "$p" | has 'PartEnforceInb:\.*0' || fail "leaf-2 port $p enforces without its P_Keys"
done
before=$("$FS" ctl refuse leaf-2 0x16)
[ "$before" = "refused so far 4" ] || fail "leaf-2 was asked: $before"
downs=$(log_count "event=link_down")
"$FS" ctl link down host-5 1 >/dev/null
log_more 20 "event=link_down" "$downs" || fail "the SM did not see host-5's link go down"
"$FS" ctl link up host-5 1 >/dev/null
wait_until 30 verify_passes || fail "the subnet did not come back after host-5's link flapped"
after=$("$FS" ctl refuse leaf-2 0x16)
[ "$after" = "$before" ] || fail "leaf-2 asked again after the flap: $before, then $after"
n=$(grep -c '"leaf-2".*Set of attribute 0x0016' "$WORK/ibsmd.log")
[ "$n" -eq 4 ] || fail "$n warnings about leaf-2's P_Key tables, want one per host port"
echo "leaf-2 refuses P_Key tables: its 4 host ports unenforced, one warning each, not asked again"
