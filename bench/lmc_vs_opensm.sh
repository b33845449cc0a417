#!/usr/bin/env bash
# ibsmd against OpenSM 3.3.23 at LMC 2 on the same fabricsim fabrics, side by side: how many
# host pairs on different switches get an alternate path for APM among the four routes to
# the destination's LIDs (no switch-to-switch link in common: it survives any one ISL
# failing; no switch in common but the two ends': it survives a switch failing too), the
# distinct routes per pair, as `fabricsim verify` reads them from the programmed tables
# ("nb l%": the first share over the pairs no bridge parts, where an alternate is possible);
# bring-up time of both and ibsmd's routing phase, and that phase at LMC 0 ("lmc0 s").
# Usage: bench/lmc_vs_opensm.sh [BUILD_DIR] [SPEC...]   (a release build: see bench/README.md)
# ENGINES="minhop updn dfsssp nue" by default, and torus on torus and mesh specs.
# Figures, not a test: nothing here is judged, least of all the times.
set -euo pipefail
BUILD=$(cd "${1:-build-rel}" && pwd)
shift || true
SPECS=("$@")
[ ${#SPECS[@]} -gt 0 ] || SPECS=("fattree:radix=8,levels=3" "torus:dims=4x4x4,hosts=2"
	"random:switches=40,radix=16,hosts=160,seed=3" "fattree:radix=8,levels=3,missing-links=8,seed=1"
	"dragonfly:groups=9,routers=4,hosts=4,global=2")
FS=$BUILD/test/fabricsim/fabricsim
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
LMC=${LMC:-2}
WORK=$(mktemp -d /tmp/lmc-bench.XXXXXX)
SIM=
trap '[ -n "$SIM" ] && kill $SIM 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
export IBSIM_SOCKNAME="lmc-bench-$$"

start() {
	(cd "$WORK" && exec "$FS" "$1" >"$WORK/sim.log" 2>&1) &
	SIM=$!
	for _ in $(seq 1 300); do
		grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && return 0
		sleep 0.1
	done
	return 1
}
stop() { kill $SIM 2>/dev/null || true; wait $SIM 2>/dev/null || true; SIM=; }

# "link% switch% nobridge-link% routes reach": verify's alternate path figures (the third:
# over the pairs no bridge parts, where an alternate apart is possible), and "ok" when every
# pair is reached (else how many are not); credit loops are left out: the layered engines'
# SLs are known only to their SA
apm() {
	"$FS" verify --json | python3 -c 'import json,sys
r = json.load(sys.stdin); a = r["apm"]; u = r["unicast"]["unreachable"]
if not a["checked"]:
    print("- - - -", "no-lmc")
else:
    print("%.1f %.1f %.1f %.2f %s" % (a["link_disjoint_pct"], a["switch_disjoint_pct"],
          a["possible_link_disjoint_pct"], a["routes_mean"],
          "ok" if u == 0 else "%d-unreached" % u))'
}

# torus-2QoS.conf for a fabricsim grid SPEC (as bench/sm_vs_opensm.sh writes it, and the
# minus links a ring of 4 needs)
torus_conf() { # SPEC FILE
	local kind=${1%%:*} dims
	dims=$(sed -n 's/.*dims=\([0-9x]*\).*/\1/p' <<<"$1" | tr x ' ')
	set -- "$2" $dims
	[ $# -eq 3 ] && set -- "$1" "$2" "$3" 1
	g() { "$FS" ctl lids | awk -v n="$1" '$4 == n { print $1 }'; }
	{
		echo "$kind $2 $3 $4"
		echo "xp_link $(g sw-0-0-0) $(g sw-1-0-0)"
		echo "yp_link $(g sw-0-0-0) $(g sw-0-1-0)"
		[ "$4" -gt 1 ] && echo "zp_link $(g sw-0-0-0) $(g sw-0-0-1)"
		# a ring of 4 also needs its minus link, or torus-2QoS refuses the seed
		[ "$kind" = torus ] && [ "$2" -eq 4 ] && echo "xm_link $(g sw-0-0-0) $(g sw-3-0-0)"
		[ "$kind" = torus ] && [ "$3" -eq 4 ] && echo "ym_link $(g sw-0-0-0) $(g sw-0-3-0)"
		[ "$kind" = torus ] && [ "$4" -eq 4 ] && echo "zm_link $(g sw-0-0-0) $(g sw-0-0-3)"
		true
	} >"$1"
}

opensm_run() { # ENGINE -> "seconds link% switch% nobridge-link% routes reach engine-used"
	local d="$WORK/osm" engine=$1 opts=
	rm -rf "$d" && mkdir -p "$d"
	# dfsssp and nue see the VLs only with QoS on (-Q) and once OperVLs are up: a first,
	# untimed sweep raises them, as a running OpenSM's earlier sweeps would have
	case $engine in
	dfsssp) opts="-Q" ;;
	nue) opts="-Q --nue_max_num_vls 8" ;;
	torus)
		torus_conf "$SPEC" "$d/torus-2QoS.conf"
		engine=torus-2QoS opts="-Q --torus_config $d/torus-2QoS.conf" ;;
	esac
	[ -n "$opts" ] && (cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM \
		timeout 600 opensm --once -Q -l "$LMC" -f "$d/warmup.log" -R minhop >/dev/null 2>&1)
	local used=$1
	osm() {
		(cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM /usr/bin/time -f "%e" \
			-o "$d/time" timeout 600 opensm --once -l "$LMC" -f "$d/osm.log" -R "$engine" \
			$opts "$@" >/dev/null 2>&1) || true
	}
	osm
	# OpenSM's up/down finds no roots on a torus or a random graph (it looks for fat-tree
	# ranks): given the fabric's first switch, as bench/sm_vs_opensm.sh gives it
	if grep -q "no root nodes were found" "$d/osm.log"; then
		echo 0x0000000000200000 >"$d/roots"
		: >"$d/osm.log"
		osm -a "$d/roots"
		used="$1(root)"
	fi
	if ! grep -q "SUBNET UP" "$d/osm.log"; then
		echo "fail - - - - - -"
		return
	fi
	# an engine that fails leaves the routes to minhop, with a log line only
	grep -q "cannot build" "$d/osm.log" && used="$1->minhop"
	echo "$(cat "$d/time") $(apm) $used"
}

ibsmd_run() { # ENGINE -> "seconds route-seconds link% switch% nobridge-link% routes reach engine-used"
	local d="$WORK/ibsmd"
	rm -rf "$d" && mkdir -p "$d"
	printf 'lmc: %s\n' "$LMC" >"$d/ibsmd.yaml"
	(cd "$d" && timeout 600 "$BUILD/daemon/ibsmd" --transport sim --once --state-dir "$d/state" \
		--config "$d/ibsmd.yaml" --routing-engine "$1" >"$d/out" 2>"$d/log") || true
	if ! grep -q "^subnet up" "$d/out"; then
		echo "fail - - - - - - -"
		return
	fi
	# the chain ends in minhop: say so when the engine asked for gave up
	local used
	used=$(sed -n 's/.*routed by \([a-z0-9-]*\) in.*/\1/p' "$d/out" | head -1)
	[ "$used" = "$1" ] || used="$1->${used:-?}"
	echo "$(sed -n 's/.*(total \([0-9.]*\) s).*/\1/p' "$d/out" | head -1)" \
		"$(sed -n 's/.*routed by [a-z0-9-]* in \([0-9.]*\) s.*/\1/p' "$d/out" | head -1)" \
		"$(apm) $used"
}

printf "%-46s %5s %-7s | %6s %6s %6s %6s %7s %-9s | %6s %6s %6s %6s %7s %8s %8s %-9s\n" \
	fabric hosts engine "OSM l%" "sw%" "nb l%" routes "up s" reach "ibsmd l%" "sw%" "nb l%" \
	routes "up s" "route s" "lmc0 s" reach
for spec in "${SPECS[@]}"; do
	hosts=$("$FS" dump "$spec" | grep -c '^Ca')
	engines=${ENGINES:-minhop updn dfsssp nue}
	case $spec in torus:* | mesh:*) [ -n "${ENGINES:-}" ] || engines="$engines torus" ;; esac
	for engine in $engines; do
		# the grid engines only on grids
		case $engine:$spec in torus:torus:* | torus:mesh:* | [!t]*:* | t[!o]*:*) ;; *) continue ;; esac
		SPEC=$spec
		start "$spec"
		read -r os_s os_l os_sw os_nb os_r os_ok os_used < <(opensm_run "$engine")
		stop
		start "$spec"
		read -r ib_s ib_route ib_l ib_sw ib_nb ib_r ib_ok ib_used < <(ibsmd_run "$engine")
		stop
		# the same engine at LMC 0: what the alternates cost in routing time
		start "$spec"
		read -r _ ib_route0 _ < <(LMC=0 ibsmd_run "$engine")
		stop
		printf "%-46s %5s %-7s | %6s %6s %6s %6s %7s %-9s | %6s %6s %6s %6s %7s %8s %8s %-9s" \
			"$spec" "$hosts" "$engine" "$os_l" "$os_sw" "$os_nb" "$os_r" "$os_s" "$os_ok" \
			"$ib_l" "$ib_sw" "$ib_nb" "$ib_r" "$ib_s" "$ib_route" "$ib_route0" "$ib_ok"
		# which engine really routed, when it was not the one asked for
		[ "$os_used" = "$engine" ] || printf "  OpenSM %s" "$os_used"
		[ "$ib_used" = "$engine" ] || printf "  ibsmd %s" "$ib_used"
		echo
	done
done
