#!/usr/bin/env bash
# A QoS policy end to end, checked from outside: storage traffic (a service ID range, towards
# the storage hosts, matched by node description) and MPI traffic (everything else) get
# different SLs in their PathRecords (ibsa paths --sid), the storage level's MTU limit holds;
# every port of the fabric maps those SLs to their VLs (smpquery sl2vl, from every input port
# of every switch) and arbitrates with the policy's weights (smpquery vlarb) and high limit
# (smpquery portinfo); fabricsim verify follows each SL through the tables: no credit loop,
# no VL a link does not run. A policy that sends an SL to a VL the links do not run is
# refused for those ports with a message, and they keep SL mod VLs. The switch_port0 class's
# tables go to switches with an enhanced port 0, none to base port 0.
# Usage: qos_policy.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need smpquery
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"

policy() { # VL of SL 3 in the CA table
	cat <<EOF
sweep_interval: 1
qos:
  port_groups:
    - name: storage
      node_description: "host-3[0-2] *"
  levels:
    - name: mpi
      sl: 2
    - name: storage
      sl: 1
      mtu_limit: 2048
      packet_life: 16
  rules:
    - service_id: 0x1000000000000001-0x10000000000000ff
      destination: storage
      level: storage
  default_level: mpi
  vl_tables:
    ca:
      sl2vl: [0, 1, 2, $1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      vlarb_high: "1:8"
      vlarb_low: "0:16,1:32,2:192"
      high_limit: 4
    switch_external:
      sl2vl: [0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      vlarb_high: "1:8"
      vlarb_low: "0:16,1:32,2:192"
      high_limit: 4
EOF
}
policy 3 >"$WORK/ibsmd.yaml"
"$BUILD/daemon/ibsmd" --check-config "$WORK/ibsmd.yaml" >/dev/null || fail "the policy is refused"

start_fabricsim "fattree:radix=8,levels=2"
start_ibsmd --config "$WORK/ibsmd.yaml"
"$FS" ctl lids >"$WORK/lids"
# the first sweep programs tables after "subnet up" is said: wait until verify sees them
wait_until 30 verify_passes || true

lid() { awk -v n="$1" '$4 == n { print $2 }' "$WORK/lids"; }
path() { # SRC DST [ibsa options]: "SL MTU" of the PathRecord
	local src dst
	src=$(lid "$1") dst=$(lid "$2")
	shift 2
	SIM_HOST=host-2 "$IBSA" --transport sim --json paths "$src" "$dst" "$@" >"$WORK/path.json" ||
		fail "ibsa paths $*"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r["sl"], r["mtu"])' "$WORK/path.json"
}
[ "$(path host-1 host-30 --sid 0x1000000000000005)" = "1 4" ] ||
	fail "storage path: SL/MTU $(path host-1 host-30 --sid 0x1000000000000005), want 1 and 2048 (code 4)"
[ "$(path host-1 host-30)" = "2 5" ] || fail "MPI path to a storage host: $(path host-1 host-30), want SL 2, MTU 4096 (5)"
[ "$(path host-1 host-5 --sid 0x1000000000000005)" = "2 5" ] ||
	fail "the storage service towards a compute host: $(path host-1 host-5 --sid 0x1000000000000005), want SL 2"
[ "$(path host-7 host-31 --sid 0x1000000000000100)" = "2 5" ] ||
	fail "a service ID outside the range: $(path host-7 host-31 --sid 0x1000000000000100), want SL 2"
echo "PathRecords: storage service to storage hosts SL 1 (MTU 2048), MPI SL 2 (MTU 4096): ok"

# every port's tables as the devices hold them
"$FS" dump "fattree:radix=8,levels=2" >"$WORK/fabric.dump"
: >"$WORK/tables.txt"
while read -r guid lid lmc name; do
	if [[ $name == host-* ]]; then
		echo "== $name $lid ca" >>"$WORK/tables.txt"
		on_sim host-1 smpquery sl2vl "$lid" >>"$WORK/tables.txt" || fail "smpquery sl2vl $lid"
		on_sim host-1 smpquery vlarb "$lid" >>"$WORK/tables.txt" || fail "smpquery vlarb $lid"
		on_sim host-1 smpquery portinfo "$lid" | sed 's/^/PI /' >>"$WORK/tables.txt"
	else
		for p in $(seq 1 8); do
			echo "== $name $lid $p" >>"$WORK/tables.txt"
			on_sim host-1 smpquery sl2vl "$lid" "$p" >>"$WORK/tables.txt" || fail "smpquery sl2vl $lid $p"
			on_sim host-1 smpquery vlarb "$lid" "$p" >>"$WORK/tables.txt" || fail "smpquery vlarb $lid $p"
			on_sim host-1 smpquery portinfo "$lid" "$p" | sed 's/^/PI /' >>"$WORK/tables.txt"
		done
	fi
done <"$WORK/lids"
python3 - "$WORK/tables.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
sl2vl, vlarb, high, cur, i = 0, 0, 0, None, 0
bad = []
while i < len(text):
    line = text[i]
    m = re.match(r'^== (\S+) (\d+) (\S+)', line)
    if m:
        cur = m.group(1) + ("" if m.group(3) == "ca" else " port " + m.group(3))
    m = re.match(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|$', line)
    if m:
        vls = [int(x) for x in m.group(3).split("|")]
        want = [0, 1, 2, 3] + [0] * 12
        if vls[:4] != want[:4] or vls != want:
            bad.append(f"{cur} in {m.group(1)}: SL2VL {vls}")
        sl2vl += 1
    m = re.match(r'^# (Low|High) priority VL Arbitration Table:', line)
    if m:
        vl = [int(x, 16) for x in text[i + 1].split("|")[1:-1]]
        wt = [int(x, 16) for x in text[i + 2].split("|")[1:-1]]
        got = [(v, w) for v, w in zip(vl, wt) if w]
        want = [(0, 16), (1, 32), (2, 192)] if m.group(1) == "Low" else [(1, 8)]
        if got != want:
            bad.append(f"{cur} {m.group(1)}: VLArb {got}, want {want}")
        vlarb += 1
        i += 2
    m = re.match(r'^PI VLHighLimit:\.*(\d+)', line)
    if m:
        high += 1
        if int(m.group(1)) != 4:
            bad.append(f"{cur}: VLHighLimit {m.group(1)}")
    i += 1
assert not bad, f"{len(bad)} wrong, e.g. " + "; ".join(bad[:4])
assert sl2vl >= 32 + 12 * 8 * 8 and vlarb == 2 * (32 + 12 * 8) and high == 32 + 12 * 8, (sl2vl, vlarb, high)
print(f"devices: {sl2vl} SL-to-VL tables (SL0-3 on VL0-3), {vlarb} VL arbitration tables "
      f"(high 1:8, low 0:16 1:32 2:192) and {high} VLHighLimit 4, as the policy says: ok")
PY

# each SL in use through every hop's table: no credit loop, no VL a link does not run
for sl in 1 2; do
	"$FS" verify --sl $sl --json >"$WORK/verify.json" || true
	python3 - "$WORK/verify.json" "$sl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["unicast"]["unreachable"] == 0 and not r["credit_loops"]["loop"] and r["vl_unrun"] == 0, \
    (r["unicast"], r["credit_loops"], r["vl_unrun"])
print(f"  SL {sys.argv[2]}: every pair reached, no credit loop, every hop on a VL its link runs")
PY
done

# a policy that does not fit: SL 3 on VL 8, which no link runs (VL0-7): said, and the CA
# ports keep SL mod 8
policy 8 >"$WORK/ibsmd.yaml"
kill -HUP "$IBSMD_PID"
wait_until 30 grep -q "qos: the ca SL-to-VL table sends SL 3 to VL 8, but .* runs 8 data VL(s)" "$WORK/ibsmd.log" ||
	fail "no message for a table that does not fit: $(grep -i qos "$WORK/ibsmd.log" | tail -3)"
ca_sl3() { on_sim host-1 smpquery sl2vl "$(awk '$4 == "host-9" { print $2 }' "$WORK/lids")" | awk -F'|' '/ports:/ { print $5 }' | tr -d ' '; }
wait_until 30 test "$(ca_sl3)" = 3 || fail "host-9 SL 3 on VL $(ca_sl3), want 3 (SL mod 8)"
"$FS" verify --sl 3 >/dev/null || fail "verify --sl 3 after the refused table"
echo "a table with VL 8 on links of VL0-7: refused with a message, ports keep SL mod VLs: ok"
stop_pids "$IBSMD_PID"
stop_sims

# switch port 0's class: switches with an enhanced port 0 (its own data VLs) get the
# switch_port0 tables there (port 0 as an output, its VL arbitration, high limit, every VL
# it can run); base port 0 (management on VL15 only) is left alone
cat >"$WORK/sp0.yaml" <<EOF
sweep_interval: 0
qos:
  vl_tables:
    switch_external:
      sl2vl: [0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      vlarb_low: "0:16,1:32,2:192"
    switch_port0:
      sl2vl: [3, 2, 1, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
      vlarb_high: "3:8"
      vlarb_low: "0:8,3:64"
      high_limit: 2
EOF
for esp0 in 1 0; do
	start_fabricsim "fattree:radix=8,levels=2,esp0=$esp0"
	rm -rf "$WORK/state"
	ibsmd_once --config "$WORK/sp0.yaml" || fail "ibsmd --once with the switch_port0 policy (esp0=$esp0)"
	"$FS" ctl lids >"$WORK/lids"
	: >"$WORK/sp0.txt"
	while read -r guid lid lmc name; do
		[[ $name == host-* ]] && continue
		echo "== $name" >>"$WORK/sp0.txt"
		on_sim host-1 smpquery sl2vl "$lid" 0 >>"$WORK/sp0.txt" || fail "smpquery sl2vl $lid 0"
		on_sim host-1 smpquery vlarb "$lid" 0 >>"$WORK/sp0.txt" || fail "smpquery vlarb $lid 0"
		on_sim host-1 smpquery portinfo "$lid" 0 2>/dev/null | sed "s/^/PI /" >>"$WORK/sp0.txt"
	done <"$WORK/lids"
	python3 - "$WORK/sp0.txt" "$esp0" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
esp0 = sys.argv[2] == "1"
sw = sum(1 for l in text if l.startswith("== "))
out0 = [l for l in text if re.match(r'^ports: in\s+\d+, out\s+0:', l)]
tables = set(tuple(int(x) for x in l.split(":", 2)[2].strip().strip("|").split("|")) for l in out0)
vl = [l for l in text if l.startswith("VL    :")]
wt = [l for l in text if l.startswith("WEIGHT")]
high_limit = [int(m.group(1)) for l in text for m in [re.match(r'^PI VLHighLimit:\.*(\d+)', l)] if m]
oper = [l for l in text if l.startswith("PI OperVLs")]
want = (3, 2, 1, 0) + (3,) * 12
if esp0:
    assert tables == {want}, ("SL-to-VL into port 0", tables)
    pairs = [sorted((int(v, 16), int(w, 16)) for v, w in zip(vl[i].split("|")[1:-1], wt[i].split("|")[1:-1]) if int(w, 16)) for i in range(len(vl))]
    assert pairs == [[(0, 8), (3, 64)], [(3, 8)]] * sw, pairs[:4]
    assert high_limit == [2] * sw, high_limit
    assert len(oper) == sw and all("VL0-7" in l for l in oper), oper[:2]
    print(f"  enhanced port 0 on {sw} switches: SL-to-VL into port 0 3,2,1,0,3..., VL arbitration "
          f"low 0:8 3:64, high 3:8, VLHighLimit 2, OperVLs VL0-7: ok")
else:
    assert all(set(w.split("|")[1:-1]) <= {"0x0 "} for w in wt), wt[:2]
    assert want not in tables, tables
    print(f"  base port 0 on {sw} switches: left alone (no VL arbitration, no SL-to-VL of the policy): ok")
PY
	check_verify 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' >/dev/null
	stop_sims
done
echo "qos policy: ok"
