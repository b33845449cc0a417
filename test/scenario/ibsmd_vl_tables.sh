#!/usr/bin/env bash
# SL-to-VL and VL arbitration tables, checked from outside with smpquery (infiniband-diags) on
# every port of a fat tree whose links run different numbers of VLs: a spine-leaf link with
# VL0-1, a host link with VL0 only, one with VL0-3, the rest VL0-7. Every output port must map
# SL s to VL s mod n for the n data VLs its link runs, from every input port; every port must
# serve exactly those VLs round robin from the low-priority table, none from the high one.
# The SA's SL2VL and VLArb records (saquery, whole tables) must say the same. Light sweeps must
# send no table again; a switch that comes back reset must get its tables again.
# Usage: ibsmd_vl_tables.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need smpquery
need saquery
FS="$BUILD/test/fabricsim/fabricsim"

# the fabric: links given fewer VLs at both ends (VLCap codes: 1 = VL0, 2 = VL0-1, 3 = VL0-3)
"$FS" dump "fattree:radix=8,levels=2" >"$WORK/base.net"
python3 - "$WORK/base.net" "$WORK/fabric.net" <<'PY'
import re, sys
src, dst = sys.argv[1:]
# (node, port) -> VLCap, for both ends of each link
want = {("spine-1", 1): 2, ("leaf-1", 5): 2}
lines, node = [], None
for line in open(src):
    m = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(2)
    m = re.match(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[(\d+)\]', line)
    if m and node == "leaf-2" and m.group(1) in ("1", "2"):
        cap = 1 if m.group(1) == "1" else 3
        want[(node, int(m.group(1)))] = cap
        want[(m.group(2), int(m.group(3)))] = cap
    lines.append([node, line])
out = []
for node, line in lines:
    m = re.match(r'^\[(\d+)\]', line)
    if m and (node, int(m.group(1))) in want:
        line = line.rstrip("\n") + f" vl={want[(node, int(m.group(1)))]}\n"
    out.append(line)
open(dst, "w").write("".join(out))
PY
grep -q 'vl=1' "$WORK/fabric.net" && grep -q 'vl=3' "$WORK/fabric.net" || fail "net file edit"

start_fabricsim "$WORK/fabric.net"
"$FS" dump "$WORK/fabric.net" >"$WORK/fabric.dump" # the links as fabricsim holds them
SIM_HOST=host-32 start_ibsmd --sweep-interval 1
"$FS" ctl lids >"$WORK/lids"

q() { on_sim host-1 "$@"; } # smpquery/saquery from host-1

read_tables() { # OUT: every port's tables as the devices hold them
	local out=$1 guid lid lmc name n
	: >"$out"
	while read -r guid lid lmc name; do
		n=$(awk -v n="$name" '$1 ~ /^(Switch|Ca)$/ { gsub(/"/, "", $3); if ($3 == n) print $2 }' "$WORK/fabric.dump")
		if [[ $name == host-* ]]; then
			echo "== $name $lid ca" >>"$out"
			q smpquery sl2vl "$lid" >>"$out" || fail "smpquery sl2vl $lid"
			q smpquery vlarb "$lid" >>"$out" || fail "smpquery vlarb $lid"
		else
			for p in $(seq 1 "$n"); do
				echo "== $name $lid $p" >>"$out"
				q smpquery sl2vl "$lid" "$p" >>"$out" || fail "smpquery sl2vl $lid $p"
				q smpquery vlarb "$lid" "$p" >>"$out" || fail "smpquery vlarb $lid $p"
			done
		fi
	done <"$WORK/lids"
}

read_tables "$WORK/tables.txt"
q saquery SL2VL >"$WORK/sa-sl2vl.txt" || fail "saquery SL2VL"
q saquery VLAR >"$WORK/sa-vlarb.txt" || fail "saquery VLAR"

python3 - "$WORK" <<'PY'
import re, sys, os
w = sys.argv[1]
# the VLs each port runs: min of both ends' VLCap (default 4 = VL0-7)
caps, node = {}, None
for line in open(os.path.join(w, "fabric.dump")):
    m = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(2)
    m = re.match(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[(\d+)\].*?(?:vl=(\d))?$', line.strip())
    if m:
        caps[(node, int(m.group(1)))] = int(m.group(4) or 4)
nvl = lambda code: [1, 1, 2, 4, 8, 15][code]

# smpquery's view, per port
sl2vl, vlarb, cur = {}, {}, None
text = open(os.path.join(w, "tables.txt")).read().splitlines()
i = 0
while i < len(text):
    line = text[i]
    m = re.match(r'^== (\S+) (\d+) (\S+)', line)
    if m:
        name, lid, port = m.group(1), int(m.group(2)), m.group(3)
        cur = (name, lid, 1 if port == "ca" else int(port))
    m = re.match(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|$', line)
    if m:
        vls = [int(x) for x in m.group(3).split("|")]
        out = int(m.group(2))
        # a CA's table is (in 0, out 0); the VLs are those of its port 1
        sl2vl[(cur[1], int(m.group(1)), out)] = (cur[0], out or cur[2], vls)
    m = re.match(r'^# (Low|High) priority VL Arbitration Table:', line)
    if m:
        vl = [int(x, 16) for x in text[i + 1].split("|")[1:-1]]
        wt = [int(x, 16) for x in text[i + 2].split("|")[1:-1]]
        vlarb[(cur[1], cur[2], m.group(1))] = (cur, list(zip(vl, wt)))
        i += 2
    i += 1

bad = []
for (lid, inp, out), (name, port, vls) in sl2vl.items():
    n = nvl(caps[(name, port)])
    if vls != [s % n for s in range(16)]:
        bad.append(f"{name} in {inp} out {out}: SL2VL {vls}, want mod {n}")
for (lid, port, prio), (cur, entries) in vlarb.items():
    n = nvl(caps[(cur[0], port)])
    want = [(v, 64) if v < n else (0, 0) for v in range(len(entries))] if prio == "Low" else [(0, 0)] * len(entries)
    if entries != want:
        bad.append(f"{cur[0]} port {port} {prio}: VLArb {entries}, want {want}")
assert not bad, f"{len(bad)} tables wrong, e.g. " + "; ".join(bad[:4])
nsw = sum(1 for v in sl2vl.values() if not v[0].startswith("host"))
assert nsw >= 12 * 8 * 9, f"only {nsw} switch SL2VL pairs read"
assert len(vlarb) == 2 * (32 + 12 * 8), f"{len(vlarb)} VLArb tables read"
print(f"devices: {len(sl2vl)} SL-to-VL tables ({nsw} switch in/out pairs) and {len(vlarb)} VL "
      f"arbitration tables, each following its link's VLs (VL0 / 0-1 / 0-3 / 0-7)")

# the SA's records against what the devices hold
def records(path, kind):
    recs, cur = [], {}
    for line in open(path):
        line = line.strip()
        if line.endswith("dump:"):
            cur = {}
            recs.append(cur)
        m = re.match(r'^(LID|InPort|OutPort|Port|Block)\.+(\d+)', line)
        if m:
            cur[m.group(1)] = int(m.group(2))
        m = re.match(r'^(VL|Weight)\s*:(.*)\|?$', line)
        if m:
            cur.setdefault(m.group(1), []).extend(int(x) for x in m.group(2).strip("|").split("|"))
    return recs
sa = records(os.path.join(w, "sa-sl2vl.txt"), "sl2vl")
checked = 0
for r in sa:
    key = (r["LID"], r["InPort"], r["OutPort"])
    if key in sl2vl:
        assert r["VL"] == sl2vl[key][2], f"SA SL2VL {key}: {r['VL']}, device {sl2vl[key][2]}"
        checked += 1
assert len(sa) == 12 * 9 * 9 + 32, f"{len(sa)} SL2VL records, want {12 * 81 + 32}"
assert checked == len(sl2vl), f"only {checked} of {len(sl2vl)} device tables found in the SA"
va = records(os.path.join(w, "sa-vlarb.txt"), "vlarb")
assert len(va) == (12 * 9 + 32) * 4, f"{len(va)} VLArb records"
vchecked = 0
for r in va:
    prio = {1: "Low", 3: "High"}.get(r["Block"])
    key = (r["LID"], r["Port"], prio)
    if key in vlarb:
        dev = vlarb[key][1]
        got = list(zip(r["VL"], r["Weight"]))[:len(dev)]
        assert got == dev, f"SA VLArb {key}: {got}, device {dev}"
        vchecked += 1
assert vchecked == len(vlarb), f"{vchecked} of {len(vlarb)} VLArb tables found in the SA"
print(f"SA: {len(sa)} SL2VL and {len(va)} VLArb records; {checked} and {vchecked} compared "
      f"with the devices: the same")
PY

# fabricsim's own check follows every path with SL 5 and SL 13 through the tables: no hop
# may put them on a VL its link does not run
for sl in 5 13; do
	"$FS" verify --json --sl "$sl" >"$WORK/verify-sl$sl.json" || true
	python3 - "$WORK/verify-sl$sl.json" "$sl" <<'PY' || fail "verify --sl $sl"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["vl_unrun"] == 0, f"SL {sys.argv[2]}: {r['vl_unrun']} channels on VLs not run: {r['issues'][:3]}"
PY
done
echo "fabricsim verify --sl 5 and 13: every hop on a VL its link runs"

# light sweeps send nothing again
ups=$(grep -c "subnet up" "$WORK/ibsmd.log")
light_sweeps_pass 3
[ "$(grep -c "subnet up" "$WORK/ibsmd.log")" = "$ups" ] ||
	fail "light sweeps sent tables again: $(grep "subnet up" "$WORK/ibsmd.log" | tail -1)"
echo "light sweeps: no table sent again"

# seen_gone WHAT PATTERN: the SM has logged PATTERN anew (it saw WHAT go) and swept after it
seen_gone() {
	log_more 30 "$2" "$seen" || fail "the SM did not see $1 go"
	log_more 30 "subnet up" "$seen_ups" || fail "no sweep after $1 went"
}
seen_from() { seen=$(log_count "$1") seen_ups=$(log_count "subnet up"); }

# a switch that comes back reset gets its tables again
LEAF2=$(awk '$4 == "leaf-2" { print $2 }' "$WORK/lids")
seen_from "no longer reachable"
"$FS" ctl node remove leaf-2 >/dev/null
seen_gone leaf-2 "no longer reachable"
"$FS" ctl node add leaf-2 >/dev/null
wait_until 30 verify_passes || fail "the subnet did not recover after leaf-2 came back"
leaf2_set() { q smpquery sl2vl "$LEAF2" 3 | has 'in  4, out  3: | 0| 1| 2| 3| 4| 5| 6| 7| 0'; }
wait_until 20 leaf2_set ||
	fail "leaf-2's SL-to-VL tables were not set again: $(q smpquery sl2vl "$LEAF2" 3 | sed -n 3,5p)"
q smpquery vlarb "$LEAF2" 1 | has '^WEIGHT: |0x40|0x0 ' || fail "leaf-2 port 1 (VL0 only) VLArb: $(q smpquery vlarb "$LEAF2" 1)"
q smpquery vlarb "$LEAF2" 2 | has '^WEIGHT: |0x40|0x40|0x40|0x40|0x0 ' || fail "leaf-2 port 2 (VL0-3) VLArb: $(q smpquery vlarb "$LEAF2" 2)"
echo "leaf-2 reset: its SL-to-VL and VLArb tables set again"

# so does a host that comes back reset (its link runs VL0-3: SL s on VL s mod 4)
HOST=$(awk '$1 ~ /^\[2\]/ && cur == "leaf-2" { gsub(/"/, "", $2); sub(/\[.*/, "", $2); print $2 } /^Switch/ { cur = $3; gsub(/"/, "", cur) }' "$WORK/fabric.dump")
HLID=$(awk -v n="$HOST" '$4 == n { print $2 }' "$WORK/lids")
seen_from "no longer reachable"
"$FS" ctl node remove "$HOST" >/dev/null
seen_gone "$HOST" "no longer reachable"
"$FS" ctl node add "$HOST" >/dev/null
host_set() { q smpquery sl2vl "$HLID" | has 'in  0, out  0: | 0| 1| 2| 3| 0| 1| 2| 3| 0'; }
wait_until 20 host_set || fail "$HOST's SL-to-VL table was not set again: $(q smpquery sl2vl "$HLID" | tail -1)"
q smpquery vlarb "$HLID" | has '^WEIGHT: |0x40|0x40|0x40|0x40|0x0 ' ||
	fail "$HOST VLArb after its reset: $(q smpquery vlarb "$HLID")"
echo "$HOST reset: its SL-to-VL and VLArb tables set again"

# requests for tables that do not exist: an empty table (GetTable), and the SA keeps serving
out=$(q saquery VLAR "$LEAF2/1/9" 2>&1) || fail "saquery VLAR $LEAF2/1/9: $out"
grep -q 'VLArbTableRecord' <<<"$out" && fail "VLArb block 9 answered: $out"
out=$(q saquery SL2VL "$LEAF2/200/1" 2>&1) || fail "saquery SL2VL $LEAF2/200/1: $out"
grep -q 'SL2VLTableRecord' <<<"$out" && fail "SL2VL from port 200 answered: $out"
q saquery SL2VL "$LEAF2/4/3" | has 'OutPort\.*3' || fail "the SA stopped answering"
echo "VLArb block 9 and SL2VL from port 200: no records; the SA keeps serving"

# ibsa lists the same records
IBSA="$BUILD/cli/ibsa"
SIM_HOST=host-1 "$IBSA" --transport sim --json sl2vl "$LEAF2" >"$WORK/ibsa-sl2vl.json" || fail "ibsa sl2vl"
SIM_HOST=host-1 "$IBSA" --transport sim --json vlarb "$LEAF2" >"$WORK/ibsa-vlarb.json" || fail "ibsa vlarb"
python3 - "$WORK" <<'PY' || fail "ibsa sl2vl/vlarb"
import json, os, sys
w = sys.argv[1]
s = json.load(open(os.path.join(w, "ibsa-sl2vl.json")))
v = json.load(open(os.path.join(w, "ibsa-vlarb.json")))
assert len(s) == 81 and len(v) == 36, f"{len(s)} SL2VL and {len(v)} VLArb records for one 8-port switch"
r = [x for x in s if x["in_port"] == 4 and x["out_port"] == 3][0]
assert r["table"]["vl"] == [sl % 8 for sl in range(16)], r
r = [x for x in v if x["out_port"] == 2 and x["block_num"] == 1][0]
assert r["table"]["weight"][:5] == [64, 64, 64, 64, 0], r  # port 2 runs VL0-3
PY
echo "ibsa sl2vl and vlarb: the same tables"

# a port whose firmware refuses VL arbitration tables: logged once, left alone, the rest of
# its configuration (SL-to-VL, ACTIVE) goes on; it is not asked again on later sweeps
R=host-9
RLID=$(awk -v n="$R" '$4 == n { print $2 }' "$WORK/lids")
"$FS" ctl refuse "$R" 0x18 >/dev/null || fail "fabricsim ctl refuse"
seen_from "no longer reachable"
"$FS" ctl node remove "$R" >/dev/null
seen_gone "$R" "no longer reachable"
"$FS" ctl node add "$R" >/dev/null
refused() { grep -q "$R HCA-1.* refused its VL arbitration table" "$WORK/ibsmd.log"; }
wait_until 20 refused || fail "no refusal logged for $R: $(tail -3 "$WORK/ibsmd.log")"
r_set() { q smpquery sl2vl "$RLID" | has 'in  0, out  0: | 0| 1| 2| 3| 4| 5| 6| 7| 0'; }
wait_until 20 r_set || fail "$R's SL-to-VL table was not set after its reset"
before=$("$FS" ctl refuse "$R" 0x18)
seen_from "event=link_down"
"$FS" ctl link down "$R" 1 >/dev/null
seen_gone "$R's link" "event=link_down"
"$FS" ctl link up "$R" 1 >/dev/null
wait_until 30 verify_passes || fail "the subnet did not come back after $R's link flapped"
n=$(grep -c "$R HCA-1.* refused its VL arbitration table" "$WORK/ibsmd.log")
[ "$n" -eq 1 ] || fail "$R's refusal logged $n times: $(grep refused "$WORK/ibsmd.log" | tail -3)"
after=$("$FS" ctl refuse "$R" 0x18)
[ "$before" = "$after" ] || fail "$R was asked again after its link came back: $before, then $after"
echo "$R refuses VL arbitration: logged once, not asked again, its port ACTIVE with its SL-to-VL table"
