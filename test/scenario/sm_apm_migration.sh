#!/usr/bin/env bash
# Automatic Path Migration, as an HCA does it: at LMC 2 a connection holds a primary path (the
# destination's base LID) and an alternate (another of its LIDs); a link on the primary path
# fails, the HCA moves to the alternate on its own, and only afterwards does the SM repair.
# For each engine that routes LMC alternates (minhop, updn, dfsssp, nue, torus) on a 4x4x4 torus,
# with the SM stopped (ibsmd --once has exited):
# - fabricsim verify, following each path's SL (ibsmd-path-sl.dump), finds every LID
#   reached and, for updn, dfsssp and nue, no credit loop with the alternates in the tables,
#   and the share of pairs with a link-disjoint alternate at least what each gives today
#   (minhop 100%, updn 99.7% on its second order, dfsssp and nue 98-99%, torus 100%: its
#   alternates by up/down orders on VLs above the datelines'; 85.7% before, in the reverse
#   dimension order, which gives the pairs on one line the same route);
# - connections picked at random (a fixed seed): one switch-to-switch link on the primary
#   path is taken down in the simulator; a data packet from the source host (fabricsim ctl
#   send: the simulator's own forwarding through the switches' tables and port states) no
#   longer gets through on the base LID (a test of the test) and still does on the
#   alternate the tables give; then the SM sweeps once, repairs, and the base LID gets
#   through again around the dead link.
# Only the forward path is asked for: the alternate's return path (the destination to the
# source's alternate LID) is the SA's to pick independent (MultiPathRecord).
# sm_apm_migration_dragonfly runs it on a dragonfly (APM_SPEC, APM_ENGINES): dfsssp lays its
# alternates LID by LID, freely or by the up/down rule, where the whole lot fits no layers.
# Usage: sm_apm_migration.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
FS="$BUILD/test/fabricsim/fabricsim"
SPEC=${APM_SPEC:-torus:dims=4x4x4,hosts=2}
PAIRS=${APM_PAIRS:-5}

# lft NAME...: every switch's table as fabricsim holds it, one file per switch
dump_tables() {
	mkdir -p "$WORK/lft"
	rm -f "$WORK/lft/"*
	for sw in $(awk '/^Switch/ { gsub(/"/, "", $3); print $3 }' "$WORK/fabric.net"); do
		"$FS" ctl lft "$sw" >"$WORK/lft/$sw"
	done
	"$FS" ctl lids >"$WORK/lids"
}

# pick SEED: "SRC DST DLID ALT NODE PORT": a connection SRC -> DST on different switches
# whose base LID DLID crosses the link at NODE/PORT (a switch-to-switch link, the middle one
# of the path) and whose alternate LID ALT does not cross it, as the tables say; "none" when
# the tables give that pair no alternate avoiding that link
pick() {
	python3 - "$WORK/fabric.net" "$WORK/lft" "$WORK/lids" "$1" <<'PY'
import os, random, re, sys
net, lftdir, lidsfile, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
peer, kind, node = {}, {}, None
for line in open(net):
    m = re.match(r'(Switch|Hca|Ca)\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(2)
        kind[node] = m.group(1)
        continue
    m = re.match(r'\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s+"([^"]+)"\[(\d+)\]', line)
    if m and node:
        peer[(node, int(m.group(1)))] = (m.group(2), int(m.group(3)))
lft = {}
for sw in os.listdir(lftdir):
    t = {}
    for line in open(os.path.join(lftdir, sw)):
        if not line.startswith("#"):
            l, p = line.split()
            t[int(l)] = int(p)
    lft[sw] = t
base, lmc = {}, {}
for line in open(lidsfile):
    guid, lid, l, name = line.split(maxsplit=3)
    name = name.split()[0]
    base[name], lmc[name] = int(lid), int(l)
def leaf(h):
    return peer[(h, 1)][0]
def path(src, dlid):  # the links (node, port) from src's switch to dlid's switch
    sw, out, seen = leaf(src), [], set()
    while True:
        p = lft[sw].get(dlid)
        if p is None or sw in seen:
            return None
        seen.add(sw)
        nxt = peer.get((sw, p))
        if nxt is None:
            return None
        if kind[nxt[0]] != "Switch":
            return out
        out.append((sw, p))
        sw = nxt[0]
def same(a, b):
    return a == b or peer.get(a) == b
hosts = sorted(h for h in kind if kind[h] != "Switch" and h in base)
rnd = random.Random(seed)
while True:
    s, d = rnd.sample(hosts, 2)
    if leaf(s) == leaf(d):
        continue
    prim = path(s, base[d])
    if not prim:
        continue
    link = prim[len(prim) // 2]
    for k in range(1, 1 << lmc[d]):
        alt = path(s, base[d] + k)
        if alt is not None and not any(same(link, x) for x in alt):
            print(s, d, base[d], base[d] + k, link[0], link[1])
            break
    else:
        print(s, d, base[d], "none", link[0], link[1])
    break
PY
}

traced() { # SRC DLID: a data packet from SRC's port 1 gets through
	"$FS" ctl send "$1" 1 "$2" >>"$WORK/trace.log" 2>&1
}

"$FS" dump "$SPEC" >"$WORK/fabric.net"
# ENGINE FLOOR NEED, comma-separated (APM_ENGINES picks some)
IFS=, read -ra SPECS <<<"${APM_ENGINES:-minhop 95 4,updn 99 4,dfsssp 95 4,nue 95 4,torus 99 4}"
for spec in "${SPECS[@]}"; do
	read -r engine share need <<<"$spec"
	cat >"$WORK/ibsmd.yaml" <<EOF
routing_engine: $engine
lmc: 2
dump_dir: $WORK/dump
dump_after_sweep: true
EOF
	start_fabricsim "$SPEC"
	rm -rf "$WORK/state" "$WORK/dump"
	ibsmd_once --config "$WORK/ibsmd.yaml" || fail "$engine: $(tail -3 "$WORK/ibsmd.log")"
	loops='not r["credit_loops"]["loop"]'
	[ "$engine" = minhop ] && loops=True # minhop is not free of credit loops on a torus
	verify_sl -- 'r["unicast"]["unreachable"] == 0' "$loops" \
		"r['apm']['link_disjoint_pct'] >= $share" ||
		fail "$engine: verify with the alternates"
	moved=0
	for i in $(seq 1 "$PAIRS"); do
		dump_tables
		read -r src dst dlid alt node port <<<"$(pick "$((i * 7 + ${#engine}))")"
		[ "$alt" != none ] || continue
		traced "$src" "$dlid" || fail "$engine: $src -> $dst (LID $dlid) not traced before the failure"
		"$FS" ctl link down "$node" "$port" >/dev/null
		# the HCA's view: the primary is dead, the alternate the tables hold gets through
		traced "$src" "$dlid" && fail "$engine: $src -> LID $dlid traced across the dead link $node/$port"
		traced "$src" "$alt" ||
			fail "$engine: $src -> $dst: alternate LID $alt does not get through with $node/$port down: $(tail -2 "$WORK/trace.log")"
		moved=$((moved + 1))
		# the SM repairs afterwards: the base LID gets through again, around the dead link
		ibsmd_once --config "$WORK/ibsmd.yaml" || fail "$engine: repair sweep: $(tail -3 "$WORK/ibsmd.log")"
		traced "$src" "$dlid" || fail "$engine: $src -> LID $dlid after the repair"
		"$FS" ctl link up "$node" "$port" >/dev/null
		ibsmd_once --config "$WORK/ibsmd.yaml" || fail "$engine: sweep after the link came back"
	done
	[ "$moved" -ge "$need" ] || fail "$engine: only $moved of $PAIRS connections had an alternate around the failed link"
	echo "$engine: $moved of $PAIRS connections migrated to their alternate LID with a link of the primary down"
	stop_sims
done
echo PASS
