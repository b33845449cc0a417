#!/usr/bin/env bash
# Link speeds and rates of today's hardware, on a mixed fabric (fabrics/mixed-speeds.net): an
# NDR, an HDR and an XDR switch; hosts from 1xSDR to 4xXDR, 2x (split) and 8x/12x ports, an
# HDR host on an NDR switch, an XDR host on an NDR switch, and a cable that trains an NDR-HDR
# inter-switch link at EDR.
# - fabricsim verify reports what each link runs and the one link slower than its ends.
# - Every PathRecord's rate is what the ports support along the route the switches' tables
#   take: computed here from the net file and the LFTs read from the switches, not by ibsmd.
#   MultiPathRecords agree.
# - OpenSM 3.3.23 on the same fabric answers the same rates wherever it knows the speeds (up
#   to HDR); past that (it does not ask PortInfo with SMSupportExtendedSpeeds) it answers
#   slower rates, which is what ibsmd was asked not to do.
# - A switch whose SMA predates IBA 1.5 refuses PortInfo with SMSupportExtendedSpeeds: ibsmd
#   says so, asks it the old way, and still brings the subnet up with its HDR rates right.
# Usage: sa_link_speeds.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

NET="$(dirname "$0")/fabrics/mixed-speeds.net"
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"

# ask SM: every host to every host, one PathRecord query each, into $WORK/SM.paths
ask_paths() {
	local sm=$1 out="$WORK/$1.paths" s d
	"$FS" ctl lids >"$WORK/$sm.lids"
	for sw in $(awk '$4 ~ /^sw-/ { print $4 }' "$WORK/$sm.lids"); do
		"$FS" ctl lft "$sw" >"$WORK/$sm.lft.$sw"
	done
	: >"$out"
	for s in $(awk '$4 ~ /^h-/ { print $2 }' "$WORK/$sm.lids"); do
		for d in $(awk '$4 ~ /^h-/ { print $2 }' "$WORK/$sm.lids"); do
			"$IBSA" --transport sim --sim-node h-hdr --json paths "$s" "$d" >>"$out" ||
				fail "$sm: no PathRecord $s -> $d"
		done
	done
}

check_rates() { # SM MODE: MODE all (every path right) or known (right up to HDR)
	python3 - "$NET" "$WORK" "$1" "$2" <<'PY'
import json, os, re, sys
net, work, sm, mode = sys.argv[1:]
SPEEDS = ["SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR"]
LANE = [2.5, 5, 10, 14, 25, 50, 100, 200]
# IBA rate codes by nominal Gb/s
CODE = {2.5: 2, 5: 5, 10: 3, 20: 6, 30: 4, 40: 7, 60: 8, 80: 9, 120: 10, 14: 11, 56: 12,
        112: 13, 168: 14, 25: 15, 100: 16, 200: 17, 300: 18, 28: 19, 50: 20, 400: 21,
        600: 22, 800: 23, 1200: 24, 1600: 25}

def parse_rate(t):
    m = re.fullmatch(r"(\d+)x([A-Z]+)", t)
    return int(m.group(1)), SPEEDS.index(m.group(2))

# the net file: each end's capability (its line's comment), cables, peers
cap, peer, train, cur = {}, {}, {}, None
for line in open(net):
    line = line.rstrip("\n")
    m = re.match(r'(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
    if m:
        cur = m.group(2)
        continue
    m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]\s*(train=\S+)?\s*#\s*(\S+)', line)
    if m:
        a = (cur, int(m.group(1)))
        b = (m.group(2), int(m.group(3)))
        peer[a], peer[b] = b, a
        cap[a] = parse_rate(m.group(5))
        if m.group(4):
            train[a] = train[b] = parse_rate(m.group(4).split("=")[1])

def widths(lanes, speed):  # what a port of this many lanes supports (2x from HDR on)
    w = {1, lanes}
    if lanes in (8, 12):
        w.add(4)
    if lanes >= 2 and speed >= SPEEDS.index("HDR"):
        w.add(2)
    return w

def link(a):  # what the link at port a runs: the best both ends support, under the cable
    b = peer[a]
    (la, sa), (lb, sb) = cap[a], cap.get(b, cap[a])
    lanes, speed = max(widths(la, sa) & widths(lb, sb)), min(sa, sb)
    if a in train:
        lanes, speed = min(lanes, train[a][0]), min(speed, train[a][1])
    return lanes, speed

lids = {}
for line in open(os.path.join(work, sm + ".lids")):
    guid, lid, lmc, name = line.split()
    lids[int(lid)] = name
lft = {}
for sw in {n for n in lids.values() if n.startswith("sw-")}:
    t = {}
    for line in open(os.path.join(work, f"{sm}.lft.{sw}")):
        if not line.startswith("#"):
            l, p = line.split()
            t[int(l)] = int(p)
    lft[sw] = t

def route(slid, dlid):  # the links a packet crosses, following the switches' tables
    at, hops = (lids[slid], 1), []
    dst = lids[dlid]
    while True:
        hops.append(at)
        nxt = peer[at][0]
        if nxt == dst:
            return hops
        at = (nxt, lft[nxt][dlid])

bad, known, unknown_diff = [], 0, 0
for line in open(os.path.join(work, sm + ".paths")):
    for r in json.loads(line):
        s, d = r["slid"], r["dlid"]
        hops = [peer[(lids[s], 1)]] if s == d else route(s, d)
        runs = [link(a) for a in hops]
        want = CODE[max(v for v in CODE if v <= min(l * LANE[sp] for l, sp in runs))]
        beyond_hdr = any(sp > SPEEDS.index("HDR") for _, sp in runs)
        if mode == "known" and beyond_hdr:
            unknown_diff += r["rate"] != want
            continue
        known += 1
        if r["rate"] != want:
            bad.append(f"{lids[s]} -> {lids[d]}: rate {r['rate']}, the ports run "
                       + " ".join(f"{l}x{SPEEDS[sp]}" for l, sp in runs) + f" (code {want})")
if bad:
    sys.exit(f"{sm}: {len(bad)} PathRecord rate(s) wrong, e.g.\n  " + "\n  ".join(bad[:8]))
print(f"  {sm}: {known} PathRecord rates as the ports support"
      + (f"; {unknown_diff} past HDR that it gets wrong" if mode == "known" else ""))
if mode == "known" and unknown_diff == 0:
    sys.exit(f"{sm}: expected it to miss the NDR/XDR rates (does it know them now?)")
PY
}

# ---- fabricsim reports what the links run ----
start_fabricsim "$NET"
check_verify "r['links']['count'] == 17" "r['links']['slow'] == 1" \
	"r['links']['disabled_speed'] == 0" >/dev/null
"$FS" verify >"$WORK/verify.txt" || true
has -F '1 slower than both ends could run ("sw-ndr"/2-"sw-hdr"/2 runs 4xEDR, both ends 4xHDR)' \
	<"$WORK/verify.txt" || fail "verify does not name the slow link: $(grep links: "$WORK/verify.txt")"
has -F '1xXDR 1, 2xHDR 1, 2xNDR 1' <"$WORK/verify.txt" || fail "verify: $(grep links: "$WORK/verify.txt")"

# ---- ibsmd: every rate right, PathRecord and MultiPathRecord ----
SIM_HOST=h-hdr start_ibsmd --sweep-interval 0
check_verify "r['ok']" >/dev/null
ask_paths ibsmd
check_rates ibsmd all
# a MultiPathRecord names at most 11 GIDs: one source, 7 destinations at a time
: >"$WORK/mpaths.json"
for src in $(awk '$4 ~ /^h-/ { print $2 }' "$WORK/ibsmd.lids"); do
	for dsts in $(awk '$4 ~ /^h-/ { print $2 }' "$WORK/ibsmd.lids" | paste -d, - - - - - - -); do
		"$IBSA" --transport sim --sim-node h-hdr --json mpaths "$src" "${dsts%%,}" \
			>>"$WORK/mpaths.json" || fail "no MultiPathRecords $src -> $dsts"
	done
done
python3 - "$WORK/ibsmd.paths" "$WORK/mpaths.json" <<'PY'
import json, sys
one = {(r["slid"], r["dlid"]): r["rate"] for l in open(sys.argv[1]) for r in json.loads(l)}
multi = {(r["slid"], r["dlid"]): r["rate"] for l in open(sys.argv[2]) for r in json.loads(l)}
diff = [k for k in one if multi.get(k) != one[k]]
assert not diff, f"MultiPathRecord rates differ from PathRecords (or are missing) at {diff[:5]}"
print(f"  {len(multi)} MultiPathRecords agree")
PY
stop_sims

# ---- OpenSM on the same fabric ----
need opensm
start_fabricsim "$NET"
OSM="$WORK/osm"
mkdir -p "$OSM"
(cd "$OSM" && SIM_HOST=h-qdr OSM_TMP_DIR=$OSM OSM_CACHE_DIR=$OSM LD_PRELOAD=$PRELOAD \
	exec opensm -f "$OSM/opensm.log" -d 2 >"$OSM/stdout.log" 2>&1) &
PIDS+=($!)
wait_until 60 grep -q "SUBNET UP" "$OSM/opensm.log" || fail "OpenSM did not come up"
ask_paths opensm
check_rates opensm known
stop_sims

# ---- an SMA older than the extended speeds ----
start_fabricsim "$NET"
fabricsim_ctl legacy-sma sw-hdr on >/dev/null
SIM_HOST=h-hdr start_ibsmd --sweep-interval 0
has 'HDR switch.*refuses PortInfo with SMSupportExtendedSpeeds' <"$WORK/ibsmd.log" ||
	fail "ibsmd did not say the old SMA refused the extended speeds bit"
check_verify "r['ok']" >/dev/null
h=$(lid_of h-hdr)
e=$(lid_of h-edr)
"$IBSA" --transport sim --sim-node h-hdr --json paths "$h" "$e" | has '"rate":16' ||
	fail "4xHDR to 4xEDR behind an old SMA is not 100 Gb/s"
echo "PASS: link speeds and rates"
