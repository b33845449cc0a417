#!/usr/bin/env bash
# Whole SA tables by GetTable and RMPP, hundreds of segments each, checked against the fabric
# as fabricsim holds it: one NodeRecord per LID with the right GUID, one PortInfoRecord per
# port, LinkRecords for every linked port in both directions, PathRecords from one host to
# others with the right GIDs.
# Usage: sa_tables.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=36,levels=2" # 648 hosts, 54 switches

start_fabricsim "$SPEC"
"$BUILD/test/fabricsim/fabricsim" dump "$SPEC" >"$WORK/fabric.net"
SIM_HOST=host-648 start_ibsmd --sweep-interval 0
"$BUILD/test/fabricsim/fabricsim" ctl lids >"$WORK/lids"
ask() { # NAME ARGS...
	local name=$1
	shift
	SIM_HOST=host-1 "$IBSA" --transport sim --json "$@" >"$WORK/$name.json" || fail "ibsa $*"
}
ask nodes nodes
ask ports ports
ask links links
ask switches switches
FROM=$(awk '$4 == "host-1" { print $2 }' "$WORK/lids")
: >"$WORK/paths.json"
for to in $(awk '$4 ~ /^host-(2|3|100|200|400|647)$/ { print $2 }' "$WORK/lids"); do
	SIM_HOST=host-1 "$IBSA" --transport sim --json paths "$FROM" "$to" >>"$WORK/paths.json" ||
		fail "ibsa paths $FROM $to"
done

python3 - "$WORK" <<'PY'
import json, os, re, sys
w = sys.argv[1]
load = lambda n: json.load(open(os.path.join(w, n + ".json")))

# the fabric: nodes, their port counts and links, from fabricsim's own net file
nodes, links = {}, set()
cur = None
for line in open(os.path.join(w, "fabric.net")):
    m = re.match(r'^(Switch|Ca)\s+(\d+)\s+"([^"]+)"', line)
    if m:
        cur = m.group(3)
        nodes[cur] = {"type": m.group(1), "ports": int(m.group(2))}
        continue
    m = re.match(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[(\d+)\]', line)
    if m and cur:
        links.add((cur, int(m.group(1)), m.group(2), int(m.group(3))))

lids = {}
for line in open(os.path.join(w, "lids")):
    guid, lid, _, name = line.split()
    lids[int(lid)] = int(guid, 16)

nr = load("nodes")
got = {r["lid"]: int(r["info"]["port_guid"], 16) for r in nr}
assert len(nr) == len(lids), f"{len(nr)} NodeRecords for {len(lids)} LIDs"
assert got == lids, "NodeRecords do not match the LIDs and GUIDs the fabric holds"
print(f"nodes: {len(nr)} NodeRecords, one per LID, GUIDs right")

sw = [n for n in nodes.values() if n["type"] == "Switch"]
ca = [n for n in nodes.values() if n["type"] == "Ca"]
pr = load("ports")
want = sum(n["ports"] + 1 for n in sw) + sum(n["ports"] for n in ca)
assert len(pr) == want, f"{len(pr)} PortInfoRecords, want {want} (every switch port and port 0, every CA port)"
print(f"ports: {len(pr)} PortInfoRecords")

lr = load("links")
pairs = {(r["from_lid"], r["from_port"], r["to_lid"], r["to_port"]) for r in lr}
assert len(lr) == len(pairs) == len(links), f"{len(lr)} LinkRecords for {len(links)} linked ports"
for a, pa, b, pb in pairs:
    assert (b, pb, a, pa) in pairs, f"LinkRecord {a}/{pa} -> {b}/{pb} has no reverse"
print(f"links: {len(lr)} LinkRecords, each with its reverse")

assert len(load("switches")) == len(sw), "one SwitchInfoRecord per switch"
paths = []
for line in open(os.path.join(w, "paths.json")):
    if line.strip():
        paths.extend(json.loads(line))
assert len(paths) == 6, f"{len(paths)} PathRecords for 6 pairs"
import ipaddress
gid_guid = lambda g: int(ipaddress.IPv6Address(g)) & ((1 << 64) - 1)
for p in paths:
    assert gid_guid(p["sgid"]) == lids[p["slid"]] and gid_guid(p["dgid"]) == lids[p["dlid"]], \
        f"path {p['slid']}->{p['dlid']}: GIDs {p['sgid']} {p['dgid']} are not those LIDs' ports"
    assert p["reversible"] == 1 and p["pkey"] == "0xffff" and p["mtu"] == 5, f"path {p}"
print(f"paths: {len(paths)} PathRecords with the right GIDs, reversible, default partition")
PY
echo "whole SA tables: ok"
