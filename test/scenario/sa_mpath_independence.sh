#!/usr/bin/env bash
# APM's alternate paths from the SA: a fat tree at LMC 2 under ibsmd, `ibsa mpaths` from
# host-1 to a host on another leaf, plain and with --independent link and node. Checked from
# outside, against the tables fabricsim's switches hold (fabricsim ctl lft) and its cabling
# (fabricsim dump): S0/D0 ... S3/D3 lead with Preference 0; the independent set comes first
# with Preference 0, its size in every record's NumbPath; its paths share no cable (link) or
# no switch either (node) there or back beyond the two hosts' own cables and leaves; and
# every path left out crosses something of the set. saquery (infiniband-diags) reads the
# PathRecord table by GIDs: all 16 LID pairs, S0/D0 .. S3/D3 first with Preference 0.
# Usage: sa_mpath_independence.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=8,levels=2" # 32 hosts, 8 leaves, 4 spines

start_fabricsim "$SPEC"
"$BUILD/test/fabricsim/fabricsim" dump "$SPEC" >"$WORK/fabric.net"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --lmc 2
fabricsim_ctl lids >"$WORK/lids"
mkdir -p "$WORK/lft"
for sw in $(awk '/^Switch/ { gsub(/"/, "", $3); print $3 }' "$WORK/fabric.net"); do
	fabricsim_ctl lft "$sw" >"$WORK/lft/$sw" || fail "fabricsim ctl lft $sw"
done
FROM=$(lid_of host-1)
TO=$(lid_of host-17)
[ -n "$FROM" ] && [ -n "$TO" ] || fail "no LIDs for host-1 and host-17"
mp() { # NAME ARGS...
	local name=$1
	shift
	SIM_HOST=host-1 "$IBSA" --transport sim "$@" >"$WORK/$name" || fail "ibsa $*"
}
mp plain.json --json mpaths "$FROM" "$TO"
mp link.json --json mpaths "$FROM" "$TO" --independent link
mp node.json --json mpaths "$FROM" "$TO" --independent node
mp link.txt mpaths "$FROM" "$TO" --independent link
grep -Eq "^# [0-9]+ link-independent paths? first$" "$WORK/link.txt" ||
	fail "ibsa mpaths --independent link does not say how many: $(tail -1 "$WORK/link.txt")"
# IndependenceSelector 3 is reserved: a usage error from ibsa, nothing asked
if SIM_HOST=host-1 "$IBSA" --transport sim mpaths "$FROM" "$TO" --independent both \
	>/dev/null 2>&1; then
	fail "ibsa mpaths --independent both was taken"
fi

# saquery (infiniband-diags), OpenSM's client, asks for the PathRecords by GIDs: it reads
# ibsmd's table whole, all 16 LID pairs, S0/D0 ... S3/D3 first
gid_of() { # NAME: its port's GID, fe80::xxxx:xxxx:xxxx:xxxx
	awk -v n="$1" '$4 == n { g = sprintf("%016s", substr($1, 3)); gsub(/ /, "0", g)
		print "fe80::" substr(g, 1, 4) ":" substr(g, 5, 4) ":" substr(g, 9, 4) ":" substr(g, 13, 4); exit }' "$WORK/lids"
}
(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 30 saquery PR \
	--sgid "$(gid_of host-1)" --dgid "$(gid_of host-17)") \
	>"$WORK/saquery-pr.txt" 2>&1 || fail "saquery PR: $(tail -2 "$WORK/saquery-pr.txt")"
python3 - "$WORK/saquery-pr.txt" "$FROM" "$TO" <<'PY' || fail "saquery PR: $(head -20 "$WORK/saquery-pr.txt")"
import re, sys
txt, s0, d0 = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])
recs = [dict(re.findall(r"(\w+)\.+(\S+)", b)) for b in txt.split("PathRecord dump:")[1:]]
pairs = [(int(r["slid"], 0), int(r["dlid"], 0)) for r in recs]
assert len(pairs) == 16, f"{len(pairs)} PathRecords, want 16"
assert sorted(pairs) == sorted((s0 + i, d0 + j) for i in range(4) for j in range(4)), pairs
assert pairs[:4] == [(s0 + i, d0 + i) for i in range(4)], f"first four {pairs[:4]}"
assert all(int(r["preference"], 0) == 0 for r in recs[:4]), "the first four without Preference 0"
assert all(int(r["preference"], 0) > 0 for r in recs[4:]), "a later one with Preference 0"
print("saquery PR: 16 PathRecords, S0/D0 .. S3/D3 first with Preference 0")
PY

python3 - "$WORK" "$FROM" "$TO" <<'PY'
import json, os, re, sys
w, src_lid, dst_lid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

# cabling: (node, port) -> (node, port); which nodes are switches
peer, switches = {}, set()
cur = None
for line in open(os.path.join(w, "fabric.net")):
    m = re.match(r'^(Switch|Ca)\s+(\d+)\s+"([^"]+)"', line)
    if m:
        cur = m.group(3)
        if m.group(1) == "Switch":
            switches.add(cur)
        continue
    m = re.match(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[(\d+)\]', line)
    if m and cur:
        peer[(cur, int(m.group(1)))] = (m.group(2), int(m.group(3)))
lft = {}
for sw in switches:
    t = {}
    for line in open(os.path.join(w, "lft", sw)):
        if not line.startswith("#"):
            lid, port = line.split()
            t[int(lid)] = int(port)
    lft[sw] = t
owner = {}  # LID -> host
for line in open(os.path.join(w, "lids")):
    _, lid, lmc, name = line.split()
    for k in range(1 << int(lmc)):
        owner[int(lid) + k] = name
src, dst = owner[src_lid], owner[dst_lid]

def cable(a):
    b = peer[a]
    return min(a, b)

def route(frm, dlid):
    """cables and switches from host frm to dlid, by the switches' tables"""
    cables, sws = [cable((frm, 1))], []
    at = peer[(frm, 1)][0]
    for _ in range(64):
        if at not in switches:
            assert at == owner[dlid], f"LID {dlid} delivered to {at}"
            return cables, sws
        sws.append(at)
        out = lft[at][dlid]
        cables.append(cable((at, out)))
        at = peer[(at, out)][0]
    raise AssertionError(f"loop to {dlid}")

def crosses(slid, dlid):
    c1, s1 = route(src, dlid)
    c2, s2 = route(dst, slid)
    return set(c1) | set(c2), set(s1) | set(s2)

# what the two hosts' own cables and leaves force on every path
forced_c = {cable((src, 1)), cable((dst, 1))}
forced_s = {peer[(src, 1)][0], peer[(dst, 1)][0]}

def conflict(a, b, node):
    ca, sa = crosses(a["slid"], a["dlid"])
    cb, sb = crosses(b["slid"], b["dlid"])
    return bool((ca & cb) - forced_c) or (node and bool((sa & sb) - forced_s))

def load(name):
    return json.load(open(os.path.join(w, name)))

plain = load("plain.json")
assert len(plain) == 16, f"{len(plain)} paths at LMC 2, want 16"
for k in range(4):
    r = plain[k]
    assert (r["slid"], r["dlid"], r["preference"]) == (src_lid + k, dst_lid + k, 0), \
        f"record {k}: {r['slid']} -> {r['dlid']} preference {r['preference']}"
assert all(r["preference"] == 2 for r in plain[4:]), "the pairs off the diagonal: Preference 2"
assert all(r["slid"] - src_lid != r["dlid"] - dst_lid for r in plain[4:])

for name, node in (("link.json", False), ("node.json", True)):
    recs = load(name)
    assert len(recs) == 16, f"{name}: {len(recs)} paths"
    n = recs[0]["num_path"]
    assert all(r["num_path"] == n for r in recs), f"{name}: NumbPath differs between records"
    assert 1 <= n <= 16, f"{name}: NumbPath {n}"
    chosen, rest = recs[:n], recs[n:]
    assert all(r["preference"] == 0 for r in chosen), f"{name}: the set has Preference 0"
    assert all(r["preference"] >= 1 for r in rest), f"{name}: the rest Preference 1 or more"
    for i, a in enumerate(chosen):
        for b in chosen[:i]:
            assert not conflict(a, b, node), \
                f"{name}: {a['slid']}->{a['dlid']} and {b['slid']}->{b['dlid']} are not independent"
    for r in rest:
        assert any(conflict(r, c, node) for c in chosen), \
            f"{name}: {r['slid']}->{r['dlid']} is independent of the set but left out"
    pairs = sorted((r["slid"], r["dlid"]) for r in recs)
    assert pairs == sorted((r["slid"], r["dlid"]) for r in plain), f"{name}: other paths"
    print(f"{name}: {n} {'node' if node else 'link'}-independent paths first, checked against the switches' tables")
PY
echo "MultiPathRecord independence: ok"
