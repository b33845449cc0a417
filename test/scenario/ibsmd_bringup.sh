#!/usr/bin/env bash
# ibsmd --once brings subnets up on fabricsim; checked from outside with fabricsim verify:
# every port ACTIVE, no LID problems, every pair of endpoints reachable, minimal paths with
# min-hop, no credit loop with up/down.
# Usage: ibsmd_bringup.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

up() { # SPEC ENGINE CHECKS...
	local spec=$1 engine=$2
	shift 2
	start_fabricsim "$spec"
	rm -rf "$WORK/state"
	ibsmd_once --routing-engine "$engine" || fail "ibsmd --once failed on $spec: $(cat "$WORK/ibsmd.out")"
	grep -q "^subnet up" "$WORK/ibsmd.out" || fail "no summary: $(cat "$WORK/ibsmd.out")"
	echo "$spec, $engine: $(cut -d, -f1-4 "$WORK/ibsmd.out")"
	check_verify 'r["ok"]' 'r["ports"]["active"] == r["ports"]["linked"] > 0' \
		'r["lids"]["zero"] == r["lids"]["duplicate"] == r["lids"]["misaligned"] == 0' \
		'r["unicast"]["unreachable"] == 0' "$@"
	smp_counts_agree
	stop_sims
}

# fabricsim's count of the Sets it carried, by attribute, against ibsmd's own account of its
# sweep; unless ibsmd retried (a retry is a second Set of one block)
smp_counts_agree() {
	grep -q '^MADs:.*[1-9][0-9]* retried' "$WORK/ibsmd.out" && return 0
	"$BUILD/test/fabricsim/fabricsim" ctl smp-counts >"$WORK/smp-counts"
	python3 - "$WORK/smp-counts" "$WORK/ibsmd.log" <<'PY' || fail "SMP counts differ: $(cat "$WORK/smp-counts.diff")"
import re, sys
c = {}
for l in open(sys.argv[1]):
    m, a, n = l.split()
    c[(m, a)] = int(n)
line = [l for l in open(sys.argv[2]) if "subnet up:" in l][-1]
def say(p):
    return int(re.search(p, line).group(1))
want = {"LFT": (c.get(("Set", "0x0019"), 0), say(r"(\d+) LFT blocks,")),
        "PortInfo": (c.get(("Set", "0x0015"), 0), say(r"(\d+) PortInfo")),
        "VL tables": (c.get(("Set", "0x0017"), 0) + c.get(("Set", "0x0018"), 0),
                      say(r"(\d+) VL table sets")),
        "P_Key": (c.get(("Set", "0x0016"), 0), say(r"(\d+) set;"))}
bad = [f"{k}: fabricsim {a}, ibsmd {b}" for k, (a, b) in want.items() if a != b]
open(sys.argv[1] + ".diff", "w").write("; ".join(bad))
sys.exit(1 if bad else 0)
PY
}

MIN='r["unicast"]["nonminimal"] == 0'
NOLOOP='not r["credit_loops"]["loop"]'
up /usr/share/doc/ibsim-utils/net-examples/net minhop "$MIN"
up /usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca2port minhop "$MIN"
up "fattree:radix=16,levels=2,hosts=64" minhop "$MIN" "$NOLOOP"
# on a complete two-level tree every shift permutation is free of congestion (it used to
# put 3 flows of one on a link: the round robin over equal ports went by LID)
up "fattree:radix=36,levels=2" minhop "$MIN" "$NOLOOP" 'r["shift"]["checked"] and r["shift"]["worst"] == 1'
up "fattree:radix=16,levels=3" minhop "$MIN" "$NOLOOP"
up "fattree:radix=36,levels=3,hosts=5184" minhop "$MIN" "$NOLOOP"
up "fattree:radix=16,levels=2,hca-ports=2" minhop "$MIN"
up "torus:dims=4x4x4,hosts=2" updn,minhop "$NOLOOP"
up "torus:dims=6x6,hosts=2" updn "$NOLOOP"
up "mesh:dims=5x5x2,hosts=1" updn "$NOLOOP"
up "random:switches=40,radix=16,hosts=200,seed=3" updn "$NOLOOP"
up "random:switches=60,radix=12,hosts=300,seed=11" updn "$NOLOOP"
# a dense irregular graph on which updn once made a five-link credit loop (a switch reached
# by a downward move climbed again): found by trying ibsmd from outside
up "$(dirname "$0")/fabrics/random30-updn-loop.net" updn "$NOLOOP"
up "random:switches=30,radix=16,hosts=120,links=120,seed=7" updn "$NOLOOP"
up "dragonfly:groups=9,routers=4,hosts=4,global=2" updn "$NOLOOP"
up "fattree:radix=16,levels=2,hosts=64" updn "$NOLOOP"

# min-hop on a torus is minimal, and verify shows the credit loop it makes
start_fabricsim "torus:dims=4x4x4,hosts=2"
ibsmd_once --routing-engine minhop || fail "minhop on a torus"
check_verify 'r["unicast"]["nonminimal"] == 0' 'r["credit_loops"]["loop"]'
stop_sims

# The SM's own queue: with the MAD layer holding 16 SMPs at once, the thousands a 5,184-host
# tree's tables take wait in the SM and all get there (a 34,000-host tree's two million
# once overflowed the MAD layer's million slots, lost the rest and came "up" with switches
# missing their tables)
start_fabricsim "fattree:radix=36,levels=3,hosts=5184"
printf 'mad_queue_max: 16\n' >"$WORK/queue.yaml"
ibsmd_once --config "$WORK/queue.yaml" || fail "bring-up with mad_queue_max 16: $(tail -3 "$WORK/ibsmd.log")"
! grep -q "cannot queue" "$WORK/ibsmd.log" || fail "SMPs were dropped: $(grep -c 'cannot queue' "$WORK/ibsmd.log")"
check_verify 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'r["ports"]["active"] == r["ports"]["linked"]'
echo "  mad_queue_max 16: $(cut -d, -f1-4 "$WORK/ibsmd.out"), every table there"
stop_sims

# The SM checks what it programmed before it calls the subnet up: a switch that refuses its
# LFT blocks leaves tables that are not what routing wants, and --once says so and exits 1
# (it used to print "subnet up" over a fabric that did not route)
start_fabricsim "fattree:radix=8,levels=2"
"$BUILD/test/fabricsim/fabricsim" ctl refuse leaf-3 0x19 >/dev/null
rc=0
ibsmd_once || rc=$?
[ "$rc" = 1 ] || fail "--once exited $rc with a switch refusing its tables: $(cat "$WORK/ibsmd.out")"
grep -q '^subnet not up: [0-9]* LFT block(s) on 1 switch(es) are not what routing wants' "$WORK/ibsmd.out" ||
	fail "no reason: $(cat "$WORK/ibsmd.out")"
echo "  a switch refusing its LFT blocks: $(cat "$WORK/ibsmd.out")"
stop_sims

# LMC 2: four LIDs per CA port, aligned, every one reachable
start_fabricsim "fattree:radix=8,levels=2"
ibsmd_once --lmc 2 || fail "LMC 2"
# the summary counts LIDs, not ports with a LID: 32 CAs x 4 and 12 switches x 1
grep -q " 140 LIDs, " "$WORK/ibsmd.out" || fail "LMC 2 summary: $(cat "$WORK/ibsmd.out")"
check_verify 'r["ok"]' 'r["lids"]["misaligned"] == 0' \
	'r["unicast"]["pairs"] == (32 * 4 + 12) * (32 + 12 - 1) - 0 or r["unicast"]["unreachable"] == 0'
stop_sims
echo "ibsmd bring-up: ok"
