#!/usr/bin/env bash
# Slurm's topology of a rail-optimized fabric, from outside: 8 GPU hosts of 4 HCAs each, HCA
# r of every host on rail r's leaf of its group (2 groups of 4 hosts, 4 rails: 8 leaves), 2
# spines over all leaves. Each host is under 4 leaves; the leaves of a group serve the same
# hosts and stand as one (leaf-g1-r1 for leaf-g1-r[1-4]), the spines over them too, as
# NVIDIA's topograph merges them:
# - `ibsa topology --slurm` writes 2 leaves of 4 hosts and 1 spine, exit 0, and Slurm's
#   slurmctld reads it with the 8 hosts placed once each;
# - `--yaml --name rails` writes the same tree as Slurm 25.05's topology.yaml (one tree
#   topology, the cluster's default), which a YAML parser reads back;
# - the HCAs' NodeDescriptions are the adapter's (no host name in them): without a map no
#   leaf is merged (a leaf with four nodes of one name is not a rail) and the name is
#   reported once; node_name_map (a
#   line per HCA's node GUID, ibnetdiscover's format) names them, and a SIGHUP reads a
#   changed map; a map with a bad line is logged with its file and line, and the names read
#   before stay;
# - one HCA cabled to the other group's leaf: that leaf no longer serves its rail's hosts,
#   every host concerned is reported on stderr and the exit status is 6.
# Usage: ibsa_topology_rail.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
IBSA="$BUILD/cli/ibsa"
topo() { "$IBSA" --control "$WORK/control" topology "$@"; }

# rails.net [miswired] [adapter]: the fabric; miswired: gpu-8's HCA 4 on leaf-g1-r4 port 5;
# adapter: the HCAs' descriptions name the adapter, not the host
net() {
	python3 - "$@" <<'PY'
import sys
miswired, adapter = "miswired" in sys.argv, "adapter" in sys.argv
out = []
sw = lambda i: 0x0002c90000100000 + i
ca = lambda h, r: 0x0002c90000200000 + (h * 8 + r) * 16
leaves = [(g, r) for g in (1, 2) for r in (1, 2, 3, 4)]
lname = lambda g, r: "leaf-g%d-r%d" % (g, r)
host_at = {}  # (leaf, port) -> (host, rail)
for h in range(1, 9):
    g, slot = (h - 1) // 4 + 1, (h - 1) % 4 + 1
    for r in (1, 2, 3, 4):
        at = (lname(g, r), slot)
        if miswired and h == 8 and r == 4:
            at = (lname(1, 4), 5)
        host_at[at] = (h, r)
for s in (1, 2):
    out.append("switchguid=0x%016x" % sw(s))
    out.append('Switch 8 "spine-%d" # "spine-%d"' % (s, s))
    for i, (g, r) in enumerate(leaves):
        out.append('[%d] "%s"[%d]' % (i + 1, lname(g, r), 5 + s))
    out.append("")
for i, (g, r) in enumerate(leaves):
    n = lname(g, r)
    out.append("switchguid=0x%016x" % sw(10 + i))
    out.append('Switch 7 "%s" # "%s"' % (n, n))
    for p in range(1, 6):
        if (n, p) in host_at:
            h, rr = host_at[(n, p)]
            out.append('[%d] "gpu-%d-hca%d"[1]' % (p, h, rr))
    for s in (1, 2):
        out.append('[%d] "spine-%d"[%d]' % (5 + s, s, i + 1))
    out.append("")
for (n, p), (h, r) in sorted(host_at.items(), key=lambda x: x[1]):
    desc = "MT4129 ConnectX-7" if adapter else "gpu-%d mlx5_%d" % (h, r - 1)
    out.append("caguid=0x%016x" % ca(h, r))
    out.append('Ca 1 "gpu-%d-hca%d" # "%s"' % (h, r, desc))
    out.append('[1] "%s"[%d]' % (n, p))
    out.append("")
print("\n".join(out))
PY
}
# the map: each HCA's node GUID to its host's name (host 8 renamed with $1)
name_map() {
	python3 - "${1:-gpu-8}" <<'PY'
import sys
print("# GPU hosts: one line per HCA, its host's name")
for h in range(1, 9):
    for r in (1, 2, 3, 4):
        print('0x%016x "%s"' % (0x0002c90000200000 + (h * 8 + r) * 16, sys.argv[1] if h == 8 else "gpu-%d" % h))
PY
}
tree_is() { # FILE LEAF1-HOSTS LEAF2-HOSTS: the merged tree, as topology.conf lines
	python3 - "$@" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
want = [["SwitchName=leaf-g1-r1", "Nodes=" + sys.argv[2]], ["SwitchName=leaf-g2-r1", "Nodes=" + sys.argv[3]],
        ["SwitchName=spine-1", "Switches=leaf-g1-r1,leaf-g2-r1"]]
assert lines == want, lines
text = open(sys.argv[1]).read()
assert "# leaf-g1-r1 stands for leaf-g1-r[1-4]: they serve the same hosts (one per rail)" in text, text
assert "# spine-1 stands for spine-[1-2]: they reach the same switches below" in text, text
PY
}

# 1. the HCAs named for their hosts (rdma-ndd's "%h %d")
net >"$WORK/rails.net"
start_fabricsim "$WORK/rails.net"
SIM_HOST=gpu-1-hca1 start_ibsmd --sweep-interval 0
topo --slurm >"$WORK/topology.conf" 2>"$WORK/err" || fail "topology --slurm: rc $?, $(cat "$WORK/err")"
[ -s "$WORK/err" ] && fail "warnings on a rail fabric: $(cat "$WORK/err")"
tree_is "$WORK/topology.conf" "gpu-[1-4]" "gpu-[5-8]" || fail "topology.conf: $(cat "$WORK/topology.conf")"
echo "a rail-optimized fabric: 8 leaves as 2, 2 spines as 1, each host once, exit 0: ok"

topo --slurm --yaml --name rails >"$WORK/topology.yaml" 2>"$WORK/err" || fail "--yaml: rc $?, $(cat "$WORK/err")"
python3 - "$WORK/topology.yaml" <<'PY' || fail "topology.yaml: $(cat "$WORK/topology.yaml")"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 1, d
t = d[0]
assert list(t)[0] == "topology" and t["topology"] == "rails" and t["cluster_default"] is True, t
assert set(t) == {"topology", "cluster_default", "tree"}, t
sw = t["tree"]["switches"]
assert sw == [{"switch": "leaf-g1-r1", "nodes": "gpu-[1-4]"}, {"switch": "leaf-g2-r1", "nodes": "gpu-[5-8]"},
              {"switch": "spine-1", "children": "leaf-g1-r1,leaf-g2-r1"}], sw
PY
echo "topology.yaml (Slurm 25.05's tree topology \"rails\", the cluster's default): the same tree: ok"
stop_pids "$IBSMD_PID"

# 2. the HCAs named for the adapter: node_name_map names the hosts; a SIGHUP reads it again
net adapter >"$WORK/adapter.net"
name_map >"$WORK/names.map"
printf 'node_name_map: %s\nsweep_interval: 0\n' "$WORK/names.map" >"$WORK/ibsmd.yaml"
stop_sims
start_fabricsim "$WORK/adapter.net"
# without the map every HCA says "MT4129": a leaf with four nodes of one name is not a rail
# of four hosts, and stands alone; the name under eight leaves is reported once
SIM_HOST=gpu-1-hca1 start_ibsmd --sweep-interval 0
rc=0
topo --slurm >"$WORK/unnamed.conf" 2>"$WORK/unnamed.err" || rc=$?
[ "$rc" = 6 ] && [ "$(grep -c "^ibsa: host MT4129: under leaf-g1-r1 and " "$WORK/unnamed.err")" = 1 ] ||
	fail "unnamed hosts: rc $rc, $(cat "$WORK/unnamed.err")"
[ "$(grep -c "^SwitchName=leaf-" "$WORK/unnamed.conf")" = 1 ] || fail "unnamed hosts merged: $(cat "$WORK/unnamed.conf")"
grep -q "stands for" "$WORK/unnamed.conf" && fail "leaves of unnamed hosts merged: $(cat "$WORK/unnamed.conf")"
echo "hosts that did not name themselves: no leaf merged, the name reported once, exit 6: ok"
stop_pids "$IBSMD_PID"
SIM_HOST=gpu-1-hca1 start_ibsmd --config "$WORK/ibsmd.yaml"
grep -q "node_name_map $WORK/names.map: 32 names" "$WORK/ibsmd.log" || fail "the map is not read: $(grep node_name_map "$WORK/ibsmd.log")"
topo --slurm >"$WORK/mapped.conf" 2>"$WORK/err" || fail "topology --slurm with the map: rc $?, $(cat "$WORK/err")"
tree_is "$WORK/mapped.conf" "gpu-[1-4]" "gpu-[5-8]" || fail "with the map: $(cat "$WORK/mapped.conf")"
name_map gpu-108 >"$WORK/names.map"
kill -HUP "$IBSMD_PID"
wait_until 10 eval '[ "$(grep -c "node_name_map $WORK/names.map: 32 names" "$WORK/ibsmd.log")" = 2 ]' ||
	fail "the map is not read again on SIGHUP: $(grep node_name_map "$WORK/ibsmd.log")"
topo --slurm >"$WORK/mapped2.conf" 2>"$WORK/err" || fail "after SIGHUP: rc $?, $(cat "$WORK/err")"
tree_is "$WORK/mapped2.conf" "gpu-[1-4]" "gpu-[5-7,108]" || fail "after SIGHUP: $(cat "$WORK/mapped2.conf")"
printf '0x0002c90000200090 "gpu-1"\nnot-a-guid "x"\n' >"$WORK/names.map"
kill -HUP "$IBSMD_PID"
wait_until 10 grep -q "node_name_map $WORK/names.map:2: .*does not start with a node GUID; the names read before stay" "$WORK/ibsmd.log" ||
	fail "a bad map line is not reported by line: $(grep node_name_map "$WORK/ibsmd.log")"
topo --slurm >"$WORK/mapped3.conf" 2>/dev/null || fail "after a bad map"
tree_is "$WORK/mapped3.conf" "gpu-[1-4]" "gpu-[5-7,108]" || fail "a bad map lost the names: $(cat "$WORK/mapped3.conf")"
echo "node_name_map: adapters' HCAs named for their hosts, read again on SIGHUP, a bad line named and the names kept: ok"
stop_pids "$IBSMD_PID"

# 3. one HCA on the other group's leaf
net miswired >"$WORK/miswired.net"
stop_sims
start_fabricsim "$WORK/miswired.net"
SIM_HOST=gpu-1-hca1 start_ibsmd --sweep-interval 0
rc=0
topo --slurm >"$WORK/miswired.conf" 2>"$WORK/err3" || rc=$?
[ "$rc" = 6 ] || fail "rc $rc with a miswired rail, want 6"
grep -q "^ibsa: host gpu-8: under leaf-g1-r4 and leaf-g2-r1, which serve different hosts" "$WORK/err3" ||
	fail "the miswired host is not reported: $(cat "$WORK/err3")"
grep -c "^SwitchName=" "$WORK/miswired.conf" >/dev/null || fail "no file with a miswired rail"
echo "a miswired rail: gpu-8 reported under leaf-g1-r4 and leaf-g2-r1, exit 6: ok"

# Slurm reads the rail tree: each host under one leaf
if ! command -v slurmctld >/dev/null || ! command -v scontrol >/dev/null; then
	echo "SKIP: slurmctld and scontrol are not installed (Debian: slurmctld slurm-client; the README's test command installs them): Slurm did not read the file"
	exit 77
fi
slurm_reads rails "$WORK/topology.conf" "gpu-[1-8]"
python3 - "$WORK/rails.topo" <<'PY' || fail "scontrol show topology: $(cat "$WORK/rails.topo")"
import sys
got = {}
for l in open(sys.argv[1]):
    f = dict(w.split("=", 1) for w in l.split())
    got[f["SwitchName"]] = (f["Level"], f.get("Nodes"), f.get("Switches"))
want = {"leaf-g1-r1": ("0", "gpu-[1-4]", None), "leaf-g2-r1": ("0", "gpu-[5-8]", None),
        "spine-1": ("1", "gpu-[1-8]", "leaf-g1-r1,leaf-g2-r1")}
assert got == want, got
PY
echo "Slurm: slurmctld reads the rail tree, each GPU host under one leaf: ok"
echo "PASS"
