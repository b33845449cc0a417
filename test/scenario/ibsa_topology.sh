#!/usr/bin/env bash
# ibsa topology --slurm and --dot on a live fabric: a 2-level fat tree (8 leaves of 4 hosts,
# 4 spines) with two inter-switch links trained below their ends. The topology.conf has
# each leaf with its 4 hosts in hostlist form and each spine over leaf-[1-8], and Slurm's
# own slurmctld (topology/tree) reads it without a complaint and shows the same tree
# (scontrol show topology); hosts and switches whose NodeDescriptions give no usable or a
# duplicate name are reported on stderr with exit status 6, and Slurm reads that file too.
# The dot graph has every link once, the two slow ones red and a quarantined one dashed
# red, switches in rank=same levels, and dot -Tsvg takes it. Slurm (slurmctld,
# slurm-client) and graphviz come with the README's test command; without slurmctld the
# Slurm part is skipped (exit 77) after the rest has passed.
# Usage: ibsa_topology.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
topo() { "$IBSA" --control "$WORK/control" topology "$@"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

start_fabricsim "fattree:radix=8,levels=2,slow-links=2"
printf 'link_flap_threshold: 6\nlink_flap_window: 60\nlink_flap_hold: 600\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"

# --slurm: the tree as the generator cabled it
topo --slurm >"$WORK/topology.conf" 2>"$WORK/err" || fail "topology --slurm: rc $?, $(cat "$WORK/err")"
[ -s "$WORK/err" ] && fail "warnings on a fabric of good names: $(cat "$WORK/err")"
python3 - "$WORK/topology.conf" <<'PY' || fail "topology.conf: $(cat "$WORK/topology.conf")"
import sys
lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
want = [["SwitchName=leaf-%d" % l, "Nodes=host-[%d-%d]" % (4 * l - 3, 4 * l)] for l in range(1, 9)]
want += [["SwitchName=spine-%d" % s, "Switches=leaf-[1-8]"] for s in range(1, 5)]
assert lines == want, lines
PY
echo "topology --slurm: 8 leaves of host-[N-M], 4 spines over leaf-[1-8]: ok"

# --dot: every link once (32 to hosts, 32 between switches), the slow ones as fabricsim
# verify counts them (leaf-1 and leaf-2 port 5 with this spec), then a flapping cable
# quarantined
slow=$("$FS" verify | sed -n 's/.*; \([0-9]*\) slower than both ends could run.*/\1/p')
[ "$slow" = 2 ] || fail "fabricsim verify counts $slow slow links, the spec made 2"
for _ in 1 2 3 4; do
	"$FS" ctl link down leaf-8 8 >/dev/null
	sleep 0.25
	"$FS" ctl link up leaf-8 8 >/dev/null
	sleep 0.25
done
wait_until 10 grep -q "event=link_quarantined" "$WORK/ibsmd.log" || fail "the flapping link was not quarantined"
topo --dot >"$WORK/fabric.dot" || fail "topology --dot: rc $?"
python3 - "$WORK/fabric.dot" <<'PY' || fail "the dot graph: $(head -40 "$WORK/fabric.dot")"
import re, sys
text = open(sys.argv[1]).read()
body = re.sub(r'//[^\n]*', '', text)
assert body.count("{") == body.count("}") and body.strip().startswith("graph fabric {"), "braces"
declared = set(re.findall(r'^\s*"([sh][0-9a-f]{16})" \[', body, re.M))
edges = re.findall(r'^\s*"([sh][0-9a-f]{16})" -- "([sh][0-9a-f]{16})" \[(.*)\];$', body, re.M)
assert len(declared) == 44, len(declared)  # 12 switches, 32 hosts
for a, b, _ in edges:
    assert a in declared and b in declared, (a, b)
pairs = [frozenset((a, b)) for a, b, _ in edges]
assert len(edges) == 64, len(edges)  # the quarantined link is still one edge
slow = [e for e in edges if "could run" in e[2]]
assert len(slow) == 2 and all("color=red" in e[2] for e in slow), slow
held = [e for e in edges if "quarantined" in e[2]]
assert len(held) == 1 and "style=dashed" in held[0][2] and "color=red" in held[0][2], held
for lv, n in (("level1", 4), ("level0", 8)):
    m = re.search(r'subgraph %s \{\s*rank=same;(.*?)\}' % lv, body, re.S)
    assert m and len(re.findall(r'"s[0-9a-f]{16}"', m.group(1))) == n, lv
assert all(re.search(r'label="(\d+x[SDQFEHNX]DR|quarantined)', e[2]) for e in edges), "labels"
PY
if command -v dot >/dev/null; then
	dot -Tsvg "$WORK/fabric.dot" >"$WORK/fabric.svg" 2>"$WORK/dot.err" || fail "dot -Tsvg: $(cat "$WORK/dot.err")"
	[ -s "$WORK/dot.err" ] && fail "dot complains: $(cat "$WORK/dot.err")"
	grep -q "<svg" "$WORK/fabric.svg" || fail "dot -Tsvg gave no SVG"
	echo "topology --dot: 64 links, 2 slow in red, the quarantined one dashed red, 2 levels; dot -Tsvg takes it: ok"
else
	echo "topology --dot: 64 links, 2 slow in red, the quarantined one dashed red, 2 levels: ok (graphviz absent: dot not run)"
fi

# names Slurm cannot use: host-5 says it is host-1 (under another leaf), host-9 has a comma,
# spine-2 says it is spine-1; leaf-3 is named as NVIDIA's switches write it
"$FS" ctl desc host-5 "$(hex "host-1 HCA-2")" >/dev/null
"$FS" ctl desc host-9 "$(hex "bad,name HCA-1")" >/dev/null
"$FS" ctl desc spine-2 "$(hex "spine-1")" >/dev/null
"$FS" ctl desc leaf-3 "$(hex "MF0;ib-leaf-3:MQM8700/U1")" >/dev/null
"$IBSA" --control "$WORK/control" sweep heavy >/dev/null
renamed() { { topo --slurm 2>/dev/null || true; } | has "^SwitchName=ib-leaf-3 "; }
wait_until 20 renamed || fail "the new descriptions never showed: $(topo --slurm 2>&1)"
rc=0
topo --slurm >"$WORK/topology2.conf" 2>"$WORK/err2" || rc=$?
[ "$rc" = 6 ] || fail "rc $rc with names left out, want 6"
grep -q "^ibsa: host 0x[0-9a-f]* (\"bad,name HCA-1\") under ib-leaf-3: no name Slurm can take" "$WORK/err2" &&
	grep -q "^ibsa: host host-1: under leaf-1 and leaf-2, which serve different hosts " "$WORK/err2" &&
	grep -q "^ibsa: switch 0x[0-9a-f]*: spine-1 is also another switch's name: named sw-0x" "$WORK/err2" &&
	[ "$(wc -l <"$WORK/err2")" = 3 ] || fail "the reports: $(cat "$WORK/err2")"
grep -q "^SwitchName=ib-leaf-3 Nodes=host-\[10-12\]$" "$WORK/topology2.conf" &&
	grep -q "^SwitchName=leaf-2 Nodes=host-\[6-8\]$" "$WORK/topology2.conf" &&
	grep -q "^SwitchName=sw-0x[0-9a-f]* Switches=ib-leaf-3,leaf-\[1-2,4-8\]$" "$WORK/topology2.conf" ||
	fail "topology.conf with bad names: $(cat "$WORK/topology2.conf")"
echo "names: a host without a usable name left out, a host under two leaves listed once, a duplicate switch by GUID, exit 6: ok"

# Slurm reads both files: slurmctld in the foreground with topology/tree and the 32 hosts,
# no authentication (auth/none: nothing leaves this host), asked by scontrol
if ! command -v slurmctld >/dev/null || ! command -v scontrol >/dev/null; then
	echo "SKIP: slurmctld and scontrol are not installed (Debian: slurmctld slurm-client; the README's test command installs them): Slurm did not read the files"
	exit 77
fi
slurm_reads good "$WORK/topology.conf" "host-[1-32]"
python3 - "$WORK/good.topo" <<'PY' || fail "scontrol show topology: $(cat "$WORK/good.topo")"
import sys
got = {}
for l in open(sys.argv[1]):
    f = dict(w.split("=", 1) for w in l.split())
    got[f["SwitchName"]] = (f["Level"], f.get("Nodes"), f.get("Switches"))
want = {"leaf-%d" % l: ("0", "host-[%d-%d]" % (4 * l - 3, 4 * l), None) for l in range(1, 9)}
want.update({"spine-%d" % s: ("1", "host-[1-32]", "leaf-[1-8]") for s in range(1, 5)})
assert got == want, got
PY
echo "Slurm: slurmctld reads topology.conf, scontrol shows 8 leaves at level 0 and 4 spines at level 1 over host-[1-32]: ok"
# the two hosts left out are in slurm.conf: Slurm sees that no switch has them, and no more
slurm_reads names "$WORK/topology2.conf" "host-[1-32]" "slurmctld: error: WARNING: switches lack access to 2 nodes: host-[5,9]"
grep -q "^SwitchName=ib-leaf-3 Level=0 .*Nodes=host-\[10-12\]" "$WORK/names.topo" &&
	grep -q "^SwitchName=sw-0x[0-9a-f]* Level=1 .*Switches=ib-leaf-3,leaf-\[1-2,4-8\]" "$WORK/names.topo" ||
	fail "scontrol show topology: $(cat "$WORK/names.topo")"
echo "Slurm: reads the file with names left out and renamed too, missing only host-[5,9]: ok"
