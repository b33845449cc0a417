#!/usr/bin/env bash
# osmtest (Debian's opensm package), the SA conformance test OpenSM ships, against OpenSM and
# against ibsmd on the same fabric with the same LIDs: it writes an inventory of nodes, ports
# and paths (flow c), then runs the validation flows: a (inventory and paths, MultiPathRecord,
# GUIDInfo, P_Key, SwitchInfo, LFT/MFT, Link, SMInfo and InformInfo records, a wrong SM_Key),
# s (services and leases), e (event forwarding), m (multicast) and q (SL-to-VL and VL
# arbitration records of every port). Both SAs must pass, the multicast flow's checks must get
# the same statuses from both, step by step, and the q flow the same records (their tables
# differ: OpenSM without QoS sets none and reports zeros, ibsmd reports what it set).
# osmtest and OpenSM run through test/fabricsim's libfabricsim-umad.so, which gives them the
# kernel's RMPP, so tables are compared whole.
# OSMTEST_LMC=2 runs it all at that LMC (both SMs), as sa_osmtest_lmc does: the path flows
# then meet ibsmd's LMC orderings (S0/D0, S1/D1 first, Preference) and its alternate routes.
# Usage: sa_osmtest.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need opensm
need osmtest
[ -f "$PRELOAD" ] || fail "$PRELOAD missing"
SPEC="fattree:radix=8,levels=2"
LMC=${OSMTEST_LMC:-0}

run_osmtest() { # DIR: the flows from host-1; the multicast checks' outcomes in DIR/steps
	local d=$1 f
	for f in c a s e m q; do
		if [ "$f" = a ] && [ "$LMC" -gt 0 ]; then
			# osmtest's path validation keys its inventory by the ports' base LIDs, so
			# at LMC > 0 it fails against OpenSM too ("ERR 0095: Unexpected path SLID"
			# naming a LID above a base one): both SAs must get through every check
			# before it and end the flow there, alike
			(cd "$d" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 180 osmtest -f a \
				-i "$d/inventory.dat" -l "$d/osmtest-a.log" >"$d/osmtest-a.out" 2>&1) &&
				fail "osmtest -f a passed against $(basename "$d") at LMC $LMC: drop this exception"
			grep -o 'ERR [0-9A-F]*' "$d/osmtest-a.log" | tail -3 | tr '\n' ' ' >"$d/end-a"
			[ "$(cat "$d/end-a")" = "ERR 0095 ERR 0100 ERR 0146 " ] ||
				fail "osmtest -f a against $(basename "$d") at LMC $LMC ended with $(cat "$d/end-a"): $(grep 'ERR ' "$d/osmtest-a.log" | tail -3)"
			continue
		fi
		(cd "$d" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 180 osmtest -f $f \
			-i "$d/inventory.dat" -l "$d/osmtest-$f.log" >"$d/osmtest-$f.out" 2>&1) ||
			fail "osmtest -f $f against $(basename "$d"): $(tail -3 "$d/osmtest-$f.out") $(grep 'ERR ' "$d/osmtest-$f.log" | grep -v 'ERR 5501\|ERR 0003' | tail -3)"
		grep -q 'PASS' "$d/osmtest-$f.out" || fail "osmtest -f $f did not pass against $(basename "$d")"
	done
	# each check's name and the status it got, in order (MGIDs the SAs make up differ)
	grep -E 'Checking|Remote error =|Number of MC' "$d/osmtest-m.log" | sed 's/.*-> //' >"$d/steps"
}

# OpenSM first
start_fabricsim "$SPEC"
OSM="$WORK/opensm"
mkdir -p "$OSM"
(cd "$OSM" && SIM_HOST=host-32 OSM_TMP_DIR=$OSM OSM_CACHE_DIR=$OSM LD_PRELOAD=$PRELOAD \
	exec opensm -f "$OSM/opensm.log" -d 2 -l "$LMC" >"$OSM/stdout.log" 2>&1) &
PIDS+=($!)
wait_until 60 grep -q "SUBNET UP" "$OSM/opensm.log" || fail "OpenSM did not come up"
run_osmtest "$OSM"
echo "OpenSM: osmtest flows c, a, s, e, m and q pass (LMC $LMC$([ "$LMC" -gt 0 ] && echo ": a up to its own LMC limit"))"
stop_sims

# then ibsmd, from OpenSM's LIDs
start_fabricsim "$SPEC"
mkdir -p "$WORK/state" "$WORK/ibsmd"
cp "$OSM/guid2lid" "$WORK/state/guid2lid" || fail "OpenSM wrote no guid2lid"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --lmc "$LMC"
run_osmtest "$WORK/ibsmd"
echo "ibsmd: osmtest flows c, a, s, e, m and q pass (LMC $LMC$([ "$LMC" -gt 0 ] && echo ": a up to its own LMC limit, as OpenSM"))"

n=$(grep -c Checking "$OSM/steps")
[ "$n" -gt 40 ] || fail "the multicast flow ran only $n checks"
diff "$OSM/steps" "$WORK/ibsmd/steps" >"$WORK/steps.diff" ||
	fail "multicast checks differ (OpenSM <, ibsmd >): $(head -20 "$WORK/steps.diff")"
echo "multicast flow: $n checks, the same statuses from both: ok"

# the q flow: the same records (LID, ports, block) in the same order
shape() { grep -vE '^(VL|WEIGHT|SL)' "$1/qos.txt"; }
n=$(grep -c '_TABLE$' "$OSM/qos.txt")
[ "$n" -ge 700 ] || fail "the q flow got only $n records"
diff <(shape "$OSM") <(shape "$WORK/ibsmd") >"$WORK/qos.diff" ||
	fail "SL-to-VL/VLArb records differ (OpenSM <, ibsmd >): $(head -20 "$WORK/qos.diff")"
grep -A5 '^SLtoVL_MAP_TABLE' "$WORK/ibsmd/qos.txt" | has -F 'VL:| 0x0 | 0x1 | 0x2 | 0x3 | 0x4 | 0x5 | 0x6 | 0x7 | 0x0' ||
	fail "ibsmd reported no SL-to-VL table spreading SLs over the 8 VLs"
echo "q flow: $n SL-to-VL and VLArb records, the same ones from both: ok"
