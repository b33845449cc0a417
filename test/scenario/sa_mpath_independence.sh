#!/usr/bin/env bash
# APM's alternate paths from the SA: a fat tree at LMC 2 under ibsmd, `ibsa mpaths` from
# host-1 to a host on another leaf, plain and with --independent link and node. Checked from
# outside, against the tables fabricsim's switches hold (fabricsim ctl lft) and its cabling
# (fabricsim dump): S0/D0 ... S3/D3 lead with Preference 0; the independent set comes first
# with Preference 0, its size in every record's NumbPath; its paths share no cable (link) or
# no switch either (node) there or back beyond the two hosts' own cables and leaves; and
# every path left out crosses something of the set. saquery (infiniband-diags) reads the
# PathRecord table by GIDs: all 16 LID pairs, S0/D0 .. S3/D3 first with Preference 0.
# Then, for host pairs picked at random (a fixed seed), `ibsa paths` and `ibsa mpaths
# --independent link`: an APM client takes the first two PathRecords, so wherever the tables
# give two LID pairs that share no cable there and back, the first two are such a pair, and
# the independent set has two paths or more.
# sa_mpath_independence_torus runs it on a 4x4x4 torus with the torus engine (MPR_SPEC,
# MPR_ENGINE, MPR_PAIRS), where S0/D0 and S1/D1 share a cable there or back for most pairs:
# the host-1 checks that assume a fat tree's order are left out there. Every RMPP answer the
# SA sent was ACKed to its end (its log says so).
# Usage: sa_mpath_independence.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FATTREE="fattree:radix=8,levels=2" # 32 hosts, 8 leaves, 4 spines
SPEC=${MPR_SPEC:-$FATTREE}
PAIRS=${MPR_PAIRS:-20}

start_fabricsim "$SPEC"
"$BUILD/test/fabricsim/fabricsim" dump "$SPEC" >"$WORK/fabric.net"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --lmc 2 \
	${MPR_ENGINE:+--routing-engine "$MPR_ENGINE"}
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
# a port's other LID names the port as its base LID does (ibsa looks up its base LID)
mp other-lid.json --json mpaths "$((FROM + 1))" "$TO"
python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert len(a) == 16 and [(r["slid"], r["dlid"]) for r in a] == [(r["slid"], r["dlid"]) for r in b]
' "$WORK/plain.json" "$WORK/other-lid.json" ||
	fail "ibsa mpaths by LID $((FROM + 1)) gave other paths than by $FROM"
grep -Eq "^# [0-9]+ link-independent paths? first$" "$WORK/link.txt" ||
	fail "ibsa mpaths --independent link does not say how many: $(tail -1 "$WORK/link.txt")"
# IndependenceSelector 3 is reserved: a usage error from ibsa naming the two words, nothing
# asked
if SIM_HOST=host-1 "$IBSA" --transport sim mpaths "$FROM" "$TO" --independent both \
	>/dev/null 2>"$WORK/both.err"; then
	fail "ibsa mpaths --independent both was taken"
fi
grep -q -- '--independent "both": link .* or node' "$WORK/both.err" ||
	fail "ibsa mpaths --independent both: $(cat "$WORK/both.err")"

# saquery (infiniband-diags), OpenSM's client, asks for the PathRecords by GIDs: it reads
# ibsmd's table whole, all 16 LID pairs, S0/D0 ... S3/D3 first
gid_of() { # NAME: its port's GID, fe80::xxxx:xxxx:xxxx:xxxx
	awk -v n="$1" '$4 == n { g = sprintf("%016s", substr($1, 3)); gsub(/ /, "0", g)
		print "fe80::" substr(g, 1, 4) ":" substr(g, 5, 4) ":" substr(g, 9, 4) ":" substr(g, 13, 4); exit }' "$WORK/lids"
}
(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 30 saquery PR \
	--sgid "$(gid_of host-1)" --dgid "$(gid_of host-17)") \
	>"$WORK/saquery-pr.txt" 2>&1 || fail "saquery PR: $(tail -2 "$WORK/saquery-pr.txt")"
python3 - "$WORK/saquery-pr.txt" "$FROM" "$TO" "$([ "$SPEC" = "$FATTREE" ] && echo 1)" <<'PY' ||
import re, sys
txt, s0, d0, fattree = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
recs = [dict(re.findall(r"(\w+)\.+(\S+)", b)) for b in txt.split("PathRecord dump:")[1:]]
pairs = [(int(r["slid"], 0), int(r["dlid"], 0)) for r in recs]
assert len(pairs) == 16, f"{len(pairs)} PathRecords, want 16"
assert sorted(pairs) == sorted((s0 + i, d0 + j) for i in range(4) for j in range(4)), pairs
lead = 4 if fattree else 2  # the torus's first two, then the rest of the diagonal
if fattree:
    assert pairs[:4] == [(s0 + i, d0 + i) for i in range(4)], f"first four {pairs[:4]}"
assert all(int(r["preference"], 0) == 0 for r in recs[:lead]), "the first without Preference 0"
assert all(int(r["preference"], 0) > 0 for r in recs[6:]), "a later one with Preference 0"
print("saquery PR: 16 PathRecords, the first with Preference 0")
PY
	fail "saquery PR: $(head -20 "$WORK/saquery-pr.txt")"

# host pairs on different switches, picked with a fixed seed; each asked for both ways
python3 - "$WORK/fabric.net" "$PAIRS" >"$WORK/pairs" <<'PY'
import random, re, sys
leaf, node = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(2) if m.group(1) == "Ca" else None
        continue
    m = re.match(r'^\[1\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[\d+\]', line)
    if m and node:
        leaf[node] = m.group(1)
hosts = sorted(leaf)
random.seed(34)
pairs = [(a, b) for a in hosts for b in hosts if leaf[a] != leaf[b]]
for a, b in random.sample(pairs, min(int(sys.argv[2]), len(pairs))):
    print(a, b)
PY
n=0
guid_of() { awk -v n="$1" '$4 == n { print $1; exit }' "$WORK/lids"; }
while read -r a b; do
	la=$(lid_of "$a") lb=$(lid_of "$b")
	# by port GUID: by LID a PathRecord query names one LID pair
	mp "pair-$n-paths.json" --json paths "$(guid_of "$a")" "$(guid_of "$b")"
	mp "pair-$n-link.json" --json mpaths "$(guid_of "$a")" "$(guid_of "$b")" --independent link
	echo "$a $b $la $lb" >>"$WORK/asked"
	n=$((n + 1))
done <"$WORK/pairs"

python3 - "$WORK" "$FROM" "$TO" "$([ "$SPEC" = "$FATTREE" ] && echo 1)" <<'PY'
import itertools, json, os, re, sys
w, src_lid, dst_lid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fattree = sys.argv[4] == "1"

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

class Pair:
    """host src to host dst: what a LID pair crosses there and back"""
    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        # what the two hosts' own cables and leaves force on every path
        self.forced_c = {cable((src, 1)), cable((dst, 1))}
        self.forced_s = {peer[(src, 1)][0], peer[(dst, 1)][0]}

    def crosses(self, slid, dlid):
        c1, s1 = route(self.src, dlid)
        c2, s2 = route(self.dst, slid)
        return set(c1) | set(c2), set(s1) | set(s2)

    def conflict(self, a, b, node):
        ca, sa = self.crosses(a["slid"], a["dlid"])
        cb, sb = self.crosses(b["slid"], b["dlid"])
        return bool((ca & cb) - self.forced_c) or (node and bool((sa & sb) - self.forced_s))

    def any_apart(self, s0, d0, n):
        """do two LID pairs (other LIDs at both ends) share no cable there and back?"""
        lids = [{"slid": s0 + i, "dlid": d0 + j} for i in range(n) for j in range(n)]
        return any(a["slid"] != b["slid"] and a["dlid"] != b["dlid"] and
                   not self.conflict(a, b, False) for a, b in itertools.combinations(lids, 2))

def load(name):
    return json.load(open(os.path.join(w, name)))

def check_set(p, recs, name, node, want_pair):
    """the independent set first: its NumbPath, Preference, independence, and nothing left
    out that is independent of it; two or more wherever two LID pairs are apart"""
    n = recs[0]["num_path"]
    assert all(r["num_path"] == n for r in recs), f"{name}: NumbPath differs between records"
    assert 1 <= n <= len(recs), f"{name}: NumbPath {n}"
    assert n >= 2 or not want_pair, f"{name}: a set of {n} where two LID pairs are apart"
    chosen, rest = recs[:n], recs[n:]
    assert all(r["preference"] == 0 for r in chosen), f"{name}: the set has Preference 0"
    assert all(r["preference"] >= 1 for r in rest), f"{name}: the rest Preference 1 or more"
    for i, a in enumerate(chosen):
        for b in chosen[:i]:
            assert not p.conflict(a, b, node), \
                f"{name}: {a['slid']}->{a['dlid']} and {b['slid']}->{b['dlid']} are not independent"
    for r in rest:
        assert any(p.conflict(r, c, node) for c in chosen), \
            f"{name}: {r['slid']}->{r['dlid']} is independent of the set but left out"
    return n

p = Pair(owner[src_lid], owner[dst_lid])
plain = load("plain.json")
assert len(plain) == 16, f"{len(plain)} paths at LMC 2, want 16"
if fattree:
    for k in range(4):
        r = plain[k]
        assert (r["slid"], r["dlid"], r["preference"]) == (src_lid + k, dst_lid + k, 0), \
            f"record {k}: {r['slid']} -> {r['dlid']} preference {r['preference']}"
    assert all(r["preference"] == 2 for r in plain[4:]), "the pairs off the diagonal: Preference 2"
    assert all(r["slid"] - src_lid != r["dlid"] - dst_lid for r in plain[4:])

for name, node in (("link.json", False), ("node.json", True)):
    recs = load(name)
    assert len(recs) == 16, f"{name}: {len(recs)} paths"
    n = check_set(p, recs, name, node, False)
    pairs = sorted((r["slid"], r["dlid"]) for r in recs)
    assert pairs == sorted((r["slid"], r["dlid"]) for r in plain), f"{name}: other paths"
    print(f"{name}: {n} {'node' if node else 'link'}-independent paths first, checked against the switches' tables")

# the sampled pairs: the first two PathRecords apart there and back wherever two LID pairs
# are, and a set of two or more
apart = first_two = 0
for k, line in enumerate(open(os.path.join(w, "asked"))):
    a, b, la, lb = line.split()
    p = Pair(a, b)
    want = p.any_apart(int(la), int(lb), 4)
    apart += want
    recs = load(f"pair-{k}-paths.json")
    assert len(recs) == 16, f"{a} -> {b}: {len(recs)} PathRecords"
    assert recs[0]["preference"] == 0 and recs[1]["preference"] == 0, f"{a} -> {b}: Preference"
    ok = not p.conflict(recs[0], recs[1], False)
    assert ok or not want, (f"{a} -> {b}: the first two PathRecords "
                            f"{recs[0]['slid']}->{recs[0]['dlid']} and {recs[1]['slid']}->{recs[1]['dlid']} "
                            "share a cable there or back, where two LID pairs share none")
    first_two += ok
    check_set(p, load(f"pair-{k}-link.json"), f"{a} -> {b} link", False, want)
print(f"{k + 1} host pairs: {apart} with two LID pairs apart there and back, "
      f"{first_two} whose first two PathRecords are")
PY
# every answer of more than one segment was ACKed to its end: ibsa ACKs the last segment and
# exits at once, and the simulator must deliver that ACK before it hears the disconnect (13
# of 100 such queries from the SM's own node left "RMPP send ... failed" in its log when it
# did not)
for _ in $(seq 1 100); do
	SIM_HOST=host-32 "$IBSA" --transport sim --json paths "$(guid_of host-1)" "$(guid_of host-17)" \
		>"$WORK/again.json" || fail "ibsa paths from the SM's node"
done
! grep "RMPP send of .* failed" "$WORK/ibsmd.log" || fail "an RMPP answer was not ACKed"
echo "MultiPathRecord independence: ok"
