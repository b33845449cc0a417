#!/usr/bin/env bash
# Tenants isolated by partitions: the default partition made limited for everyone (the SM
# stays a full member), host-1 and host-2 in 0x8001, host-3 and host-4 in 0x8002. A
# requester sees only the ports it shares a partition with: host-1 gets NodeRecords,
# PortInfoRecords and paths for host-2 (on P_Key 0x8001) but none for host-3; the SM_Key
# shows everything.
# Usage: sa_partitions.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
cat >"$WORK/ibsmd.yaml" <<'YAML'
partitions:
  - name: default
    pkey: 0x7fff
    membership: limited
    members: all
  - name: tenant-a
    pkey: 0x8001
    members: [0x100001, 0x100003]
  - name: tenant-b
    pkey: 0x8002
    members: [0x100005, 0x100007]
YAML
start_fabricsim "fattree:radix=8,levels=2"
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
lid3=$("$BUILD/test/fabricsim/fabricsim" ctl lids | awk '$4 == "host-3" { print $2 }')
out=$(as host-1 --json paths "host-1 HCA-1" "$lid3" 2>&1) && fail "host-1 got a path to host-3: $out"
echo "paths within a tenant (P_Key 0x8001), none across: ok"
check_verify 'r["ok"]' >/dev/null || fail "fabricsim verify"
