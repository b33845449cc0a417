#!/usr/bin/env bash
# Virtual ports (SR-IOV VFs, IBA Annex A18) on a fat tree: 4 VFs on each of 32 hosts' ports,
# half asking for a LID of their own. Every vport comes up (ACTIVE), the ones that asked have
# a LID routed to their port (fabricsim verify), the partition that names two VF GUIDs is on
# those VFs' P_Key tables alone, and so is a key the partition API gives two others; the SA
# answers PathRecords between vports by GID with their own LIDs, and a VF's NodeRecord,
# PortInfoRecord and GUIDInfoRecord at its LID; a VF added and removed at run time is
# followed by its trap without a heavy sweep; the LIDs survive a restart.
# Usage: sm_vports.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2,vports=8" # 4 spines, 8 leaves, 32 hosts
# a VF's GUID, as an orchestrator gives it: host H, vport I
vguid() { printf '0x0002c9030a%04x%02x' "$1" "$2"; }
for h in $(seq 1 32); do
	for i in 1 2 3 4; do
		lid=
		[ $i -le 2 ] && lid=lid
		"$FS" ctl vport add "host-$h" 1 "$i" "$(vguid "$h" "$i")" $lid >/dev/null ||
			fail "vport add host-$h $i"
	done
done
A=$(vguid 1 1) B=$(vguid 2 1)
cat >"$WORK/ibsmd.yaml" <<YAML
partitions:
  - name: default
    pkey: 0x7fff
    membership: full
    members: all
  - name: tenant
    pkey: 0x8010
    membership: full
    members: [$A, $B]
YAML
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
vports_up() {
	"$FS" verify --json >"$WORK/verify.json" 2>/dev/null || true
	python3 - "$WORK/verify.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = r["vports"]
# 128 VFs and the 32 PFs (vport 0 of each port, once virtualization is on)
sys.exit(not (r["ok"] and v["count"] == 160 and v["active"] == 160 and v["own_lids"] == 64
              and v["lid_routes_missing"] == 0))
PY
}
wait_until 20 vports_up ||
	fail "vports not all up: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["vports"], r["issues"][:4])' "$WORK/verify.json")"
echo "160 vports ACTIVE (128 VFs, 32 PFs), 64 LIDs of their own routed to their ports: ok"

# ibsa vports: the SM's view agrees with the HCAs'
"$IBSA" --control "$WORK/control" vports >"$WORK/vports.txt" || fail "ibsa vports"
[ "$(wc -l <"$WORK/vports.txt")" = 128 ] || fail "ibsa vports lists $(wc -l <"$WORK/vports.txt"), want 128"
own=$(awk '$4 == "own" { print $2 }' "$WORK/vports.txt" | sort -n | uniq | wc -l)
[ "$own" = 64 ] || fail "$own distinct own LIDs, want 64"
lidA=$(awk -v g="$A" '$1 == g { print $2 }' "$WORK/vports.txt")
fsA=$("$FS" ctl vports host-1 | awk -v g="$A" '$3 == g { print $4, $5 }')
[ "$fsA" = "$lidA ACTIVE" ] || fail "host-1 vport 1: the HCA says '$fsA', ibsa says LID $lidA"
echo "ibsa vports: 128 VFs, LIDs as the HCAs hold them: ok"

# P_Keys: the tenant partition on the two VFs named, not on their siblings or ports
"$FS" ctl vports host-1 | awk -v g="$A" '$3 == g' | grep -q ' 0x8010' ||
	fail "host-1 vport 1 lacks 0x8010: $("$FS" ctl vports host-1)"
"$FS" ctl vports host-2 | awk -v g="$B" '$3 == g' | grep -q ' 0x8010' ||
	fail "host-2 vport 1 lacks 0x8010"
if "$FS" ctl vports host-1 | awk '$2 == 2 || $2 == 0' | grep -q ' 0x8010'; then
	fail "0x8010 on a vport the partition does not name: $("$FS" ctl vports host-1)"
fi
echo "P_Key 0x8010 on the two VFs named, on no other: ok"

# and through the partition API (the control socket's, which the REST API shares): a key on
# two other VFs, on their P_Key tables without a sweep, and off again when removed
A2=$(vguid 1 2) B2=$(vguid 2 2)
has_key() { "$FS" ctl vports "$1" | awk -v g="$2" '$3 == g' | grep -q " $3"; }
"$IBSA" --control "$WORK/control" partition add 0x0020 "$A2,$B2" >/dev/null || fail "ibsa partition add"
wait_until 5 has_key host-1 "$A2" 0x8020 && wait_until 5 has_key host-2 "$B2" 0x8020 ||
	fail "the API's key is not on the VFs: $("$FS" ctl vports host-1 | awk -v g="$A2" '$3 == g')"
has_key host-1 "$A" 0x8020 && fail "0x8020 on a VF the API did not name"
"$IBSA" --control "$WORK/control" partition remove 0x0020 "$A2" >/dev/null || fail "ibsa partition remove"
wait_until 5 sh -c "! '$FS' ctl vports host-1 | awk -v g='$A2' '\$3 == g' | grep -q ' 0x8020'" ||
	fail "removed, the key stays on the VF"
echo "P_Key 0x8020 given to two VFs through the partition API, taken from one: ok"

# PathRecords between two vports by GID: their own LIDs
lidB=$(awk -v g="$B" '$1 == g { print $2 }' "$WORK/vports.txt")
SIM_HOST=host-32 "$IBSA" --transport sim --json paths "$A" "$B" >"$WORK/path.json" ||
	fail "ibsa paths between vports: $(cat "$WORK/path.json")"
python3 - "$WORK/path.json" "$lidA" "$lidB" "$A" "$B" <<'PY' || fail "PathRecord between vports: $(cat "$WORK/path.json")"
import ipaddress, json, sys
r = json.load(open(sys.argv[1]))
gid = lambda g: str(ipaddress.IPv6Address(0xfe80 << 112 | int(g, 16)))
sys.exit(not (r and r[0]["slid"] == int(sys.argv[2]) and r[0]["dlid"] == int(sys.argv[3])
              and r[0]["sgid"] == gid(sys.argv[4]) and r[0]["dgid"] == gid(sys.argv[5])))
PY
echo "PathRecord vport to vport: SLID $lidA DLID $lidB, the vports' own GIDs: ok"

# the SA's records of a VF with a LID of its own, asked from its PF's host: its NodeRecord
# with its virtual node's own description (VNodeDescription), its PortInfoRecord (its LID,
# ACTIVE), its GUIDInfoRecord (its GUID at index 0)
for what in nodes ports guids; do
	SIM_HOST=host-1 "$IBSA" --transport sim --json "$what" "$lidA" >"$WORK/vf.$what.json" ||
		fail "ibsa $what $lidA: $(cat "$WORK/vf.$what.json")"
done
python3 - "$WORK" "$lidA" "$A" <<'PY' || fail "the VF's records: $(cat "$WORK"/vf.*.json)"
import json, sys
w, lid, guid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16)
num = lambda v: int(v, 0) if isinstance(v, str) else v
n, p, g = (json.load(open("%s/vf.%s.json" % (w, k))) for k in ("nodes", "ports", "guids"))
sys.exit(not (len(n) == 1 and num(n[0]["info"]["port_guid"]) == guid
              and n[0]["desc"]["desc"].endswith(" VF1")
              and len(p) == 1 and num(p[0]["info"]["lid"]) == lid
              and num(p[0]["info"]["port_state"]) == 4
              and g and num(g[0]["info"]["guid[0]"]) == guid))
PY
echo "the VF's NodeRecord (its own description), PortInfoRecord and GUIDInfoRecord at LID $lidA: ok"

# a VF at run time: its trap, an incremental sweep (no node read again), up with a LID
nodeinfo() { "$FS" ctl smp-counts | awk '$1 == "Get" && $2 == "0x0011" { print $3 }'; }
before=$(nodeinfo)
"$FS" ctl vport add host-3 1 5 lid >/dev/null || fail "vport add host-3 5"
new_up() { "$FS" ctl vports host-3 | awk '$2 == 5 && $5 == "ACTIVE" && $4 > 0 { f = 1 } END { exit !f }'; }
wait_until 10 new_up || fail "the VF added at run time is not up: $("$FS" ctl vports host-3)"
after=$(nodeinfo)
[ $((after - before)) -lt 44 ] ||
	fail "a VF added: $((after - before)) NodeInfo reads, a heavy sweep (44 nodes)"
wait_until 10 verify_passes || fail "verify after the VF came: $("$FS" verify | tail -5)"
echo "a VF added at run time: ACTIVE with a LID routed to it, $((after - before)) NodeInfo reads: ok"
"$FS" ctl vport remove host-3 1 5 >/dev/null || fail "vport remove"
gone() { ! "$IBSA" --control "$WORK/control" vports | awk '$6 == 5 && $8 == "host-3" { f = 1 } END { exit !f }'; }
wait_until 10 gone || fail "the VF removed is still listed: $("$IBSA" --control "$WORK/control" vports)"
echo "a VF removed: gone from the SM's vports: ok"

# a restart keeps the vports' LIDs (guid2lid)
stop_pids "$IBSMD_PID"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 20 vports_up || fail "vports not all up after a restart"
"$IBSA" --control "$WORK/control" vports >"$WORK/vports2.txt" || fail "ibsa vports after restart"
diff <(awk '{ print $1, $2 }' "$WORK/vports.txt" | sort) <(awk '{ print $1, $2 }' "$WORK/vports2.txt" | sort) >"$WORK/lids.diff" ||
	fail "vport LIDs moved across a restart: $(head "$WORK/lids.diff")"
echo "a restart: every vport keeps its LID: ok"
echo "sm_vports: ok"
