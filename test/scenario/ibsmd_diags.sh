#!/usr/bin/env bash
# The standard tools agree with ibsmd: infiniband-diags (sminfo, ibnetdiscover, ibroute,
# ibtracert, smpquery) run against fabricsim through libumad2sim.so while ibsmd runs.
# Usage: ibsmd_diags.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need sminfo
need ibroute
need ibtracert
FS="$BUILD/test/fabricsim/fabricsim"
SPEC="fattree:radix=8,levels=2"
start_fabricsim "$SPEC"
SIM_HOST=host-32 start_ibsmd --sweep-interval 2
"$FS" ctl lids | sort >"$WORK/lids"
lid_of() { awk -v n="$1" '$4 == n { print $2 }' "$WORK/lids"; }
sm_lid=$(lid_of host-32)
diag() { umad2sim "$@" 2>>"$WORK/diags.log"; }

# sminfo: our SM, MASTER, at its LID
out=$(diag sminfo) || fail "sminfo failed: $(tail -3 "$WORK/diags.log")"
echo "$out" | has "sm lid $sm_lid " || fail "sminfo: $out"
echo "$out" | has "SMINFO_MASTER" || fail "sminfo state: $out"
echo "sminfo: $out"

# ibnetdiscover: the same cables, and every CA port's LID as ibsmd assigned it
diag ibnetdiscover >"$WORK/disc.net" || fail "ibnetdiscover failed"
"$FS" links "$SPEC" | sort >"$WORK/want"
"$FS" links "$WORK/disc.net" | sort >"$WORK/got"
diff -q "$WORK/want" "$WORK/got" >/dev/null || fail "ibnetdiscover sees other cables"
python3 - "$WORK/disc.net" "$WORK/lids" <<'PY' || fail "LIDs in ibnetdiscover differ"
import re, sys
want = {}
for line in open(sys.argv[2]):
    guid, lid, lmc, name = line.split()
    want[int(guid, 16)] = int(lid)
seen = 0
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+\]\(([0-9a-f]+)\)\s+"[^"]+"\[\d+\].*# lid (\d+) lmc', line)
    if m:
        g, lid = int(m.group(1), 16), int(m.group(2))
        assert want.get(g) == lid, f"port {g:#x}: ibnetdiscover lid {lid}, ibsmd {want.get(g)}"
        seen += 1
assert seen == 32, f"{seen} CA ports checked"
PY
echo "ibnetdiscover: same cables, same LIDs"

# ibroute: every switch's forwarding table as ibsmd programmed it
for sw in leaf-1 spine-2; do
	swlid=$(lid_of "$sw")
	diag ibroute "$swlid" >"$WORK/ibroute" || fail "ibroute $sw failed"
	"$FS" ctl lft "$sw" | grep -v '^#' | sort -n >"$WORK/lft.fs"
	python3 -c 'import sys
for l in open(sys.argv[1]):
    f = l.split()
    if f and f[0].startswith("0x"):
        print(int(f[0], 16), int(f[1]))' "$WORK/ibroute" | sort -n >"$WORK/lft.ib"
	diff -q "$WORK/lft.fs" "$WORK/lft.ib" >/dev/null ||
		fail "ibroute $sw differs: $(diff "$WORK/lft.fs" "$WORK/lft.ib" | head -5)"
done
echo "ibroute: tables as programmed"

# ibtracert: paths between hosts on different leaves exist and are 4 hops
for pair in "host-1 host-32" "host-5 host-20" "host-17 host-2"; do
	set -- $pair
	out=$(diag ibtracert "$(lid_of "$1")" "$(lid_of "$2")") ||
		fail "ibtracert $1 -> $2 failed: $(tail -2 "$WORK/diags.log")"
	hops=$(echo "$out" | grep -c '^\[')
	[ "$hops" -eq 4 ] || fail "ibtracert $1 -> $2: $hops hops: $out"
done
echo "ibtracert: host paths of 4 hops"

# smpquery: a CA port is Active with its LID and the SM's LID
out=$(diag smpquery portinfo "$(lid_of host-7)" 1) || fail "smpquery failed"
echo "$out" | has "^LinkState:\.*Active" || fail "smpquery state: $out"
echo "$out" | has "^Lid:\.*$(lid_of host-7)$" || fail "smpquery lid: $out"
echo "$out" | has "^SMLid:\.*$sm_lid$" || fail "smpquery SM LID: $out"
echo "smpquery: Active, LID and SM LID right"
echo "diags agree with ibsmd: ok"
