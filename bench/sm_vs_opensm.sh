#!/usr/bin/env bash
# ibsmd against OpenSM 3.3.23 on the same fabricsim fabrics, side by side: bring-up wall time
# (one sweep: discovery, LIDs, routing, programming, all ports ACTIVE) and peak memory, with
# each engine both have (min-hop, up/down, down/up, fat tree), the shift permutations' worst
# link load on each result; ibsmd's routing time from its own phase timing.
# Usage: bench/sm_vs_opensm.sh [BUILD_DIR] [SPEC...]   (a release build: see bench/README.md)
# Default: 2- and 3-level fat trees of 648, 5,184 and 11,664 hosts. Figures, not a test.
set -euo pipefail
BUILD=$(cd "${1:-build-rel}" && pwd)
shift || true
SPECS=("$@")
[ ${#SPECS[@]} -gt 0 ] || SPECS=("fattree:radix=36,levels=2" "fattree:radix=36,levels=3,hosts=5184"
	"fattree:radix=36,levels=3")
FS=$BUILD/test/fabricsim/fabricsim
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=$(mktemp -d /tmp/sm-bench.XXXXXX)
SIM=
trap '[ -n "$SIM" ] && kill $SIM 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
export IBSIM_SOCKNAME="sm-bench-$$"

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
# "ok|FAIL WORST": all pairs reached, every port ACTIVE and no credit loop, and the worst
# link load of the shift permutations (checked up to 8,192 hosts, "-" above). PATH_SL:
# ibsmd's path SL dump, for verify to follow each path on its SL; "unknown" for an engine
# whose SLs only its SA knows (OpenSM's dfsssp, nue, torus-2QoS): a loop on SL0 then reads
# "loop@SL0", not a failure; "" for an engine that uses SL0 alone, where a loop is one.
verdict() {
	local sl=${1:-}
	[ "$sl" = unknown ] && sl=
	"$FS" verify --json ${sl:+--path-sl "$sl"} | python3 -c 'import json,sys
r = json.load(sys.stdin); u = r["unicast"]["unreachable"]
ok = u == 0 and r["ports"]["active"] == r["ports"]["linked"]
v = ("ok" if not r["credit_loops"]["loop"] else "loop@SL0" if sys.argv[1] == "unknown" else "FAIL") if ok else ("%d-unreached" % u) if u else "FAIL"
print(v, r["shift"]["worst"] if r["shift"]["checked"] else "-")' "${1:-sl0}"
}

# torus-2QoS.conf for a fabricsim grid SPEC (torus:dims=AxBxC or mesh:...): the sizes and
# the plus links of the switch at 0,0,0 (fabricsim names switches sw-X-Y-Z)
torus_conf() { # SPEC FILE
	local kind=${1%%:*} dims g
	dims=$(sed -n 's/.*dims=\([0-9x]*\).*/\1/p' <<<"$1" | tr x ' ')
	set -- "$2" $dims
	[ $# -eq 3 ] && set -- "$1" "$2" "$3" 1
	g() { "$FS" ctl lids | awk -v n="$1" '$4 == n { print $1 }'; }
	{
		echo "$kind $2 $3 $4"
		echo "xp_link $(g sw-0-0-0) $(g sw-1-0-0)"
		echo "yp_link $(g sw-0-0-0) $(g sw-0-1-0)"
		[ "$4" -gt 1 ] && echo "zp_link $(g sw-0-0-0) $(g sw-0-0-1)"
	} >"$1"
}

opensm_run() { # ENGINE -> "seconds MB verdict"
	local d="$WORK/osm"
	rm -rf "$d" && mkdir -p "$d"
	local engine=$1
	[ "$engine" = updn ] && echo 0x0000000000200000 >"$d/roots"
	# dfsssp sees the VLs only with QoS on (-Q) and once OperVLs are up: a first sweep
	# (not timed) raises them, as a running OpenSM's earlier sweeps would have
	# (nue likewise, allowed as many VLs as ibsmd's: 8)
	local vlopts=
	case $engine in
	dfsssp) vlopts="-Q" ;;
	nue) vlopts="-Q --nue_max_num_vls 8" ;;
	torus) # OpenSM's is torus-2QoS, told the grid's shape by its configuration file
		torus_conf "$SPEC" "$d/torus-2QoS.conf"
		engine=torus-2QoS vlopts="-Q --torus_config $d/torus-2QoS.conf" ;;
	file) vlopts="-U $WORK/lfts.dump" ;; # the dump both load (see the loop)
	esac
	[ -n "$vlopts" ] && [ "$engine" != file ] && (cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM \
		timeout 1800 opensm --once -Q -f "$d/warmup.log" -R minhop >/dev/null 2>&1)
	(cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM /usr/bin/time -f "%e %M" -o "$d/time" \
		timeout 1800 opensm --once -f "$d/osm.log" -R "$engine" \
		$([ "$engine" = updn ] && echo "-a $d/roots") \
		$vlopts >/dev/null 2>&1) || true
	# when dfsssp needs more VLs than there are, OpenSM routes with its default engine
	if grep -q "ERR AD25\|cannot build fwd tables" "$d/osm.log"; then
		local avail
		avail=$(sed -n 's/.*Virtual Lanes available: \([0-9]*\).*/\1/p' "$d/osm.log" | tail -1)
		awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$d/time"
		echo " engine-failed - ${avail:+>}${avail:--}"
	elif grep -q "SUBNET UP" "$d/osm.log"; then
		awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$d/time"
		local vls
		vls=$(sed -n 's/.*Virtual Lanes needed: \([0-9]*\).*/\1/p' "$d/osm.log" | tail -1)
		[ "$engine" = torus-2QoS ] && vls=2 # its datelines: two VLs
		local how=
		[ -n "$vlopts" ] && [ "$engine" != file ] && how=unknown # its SLs are its SA's
		echo " $(verdict $how) ${vls:-1}"
	else
		echo "fail - - - -"
	fi
}

ibsmd_run() { # ENGINE -> "seconds MB verdict route-seconds"
	local d="$WORK/ibsmd"
	rm -rf "$d" && mkdir -p "$d"
	printf 'dump_dir: %s/dump\ndump_after_sweep: true\nlfts_file: %s/lfts.dump\n' "$d" "$WORK" \
		>"$d/ibsmd.yaml"
	(cd "$d" && /usr/bin/time -f "%e %M" -o "$d/time" timeout 1800 "$BUILD/daemon/ibsmd" \
		--transport sim --once --state-dir "$d/state" --config "$d/ibsmd.yaml" \
		--routing-engine "$1" >"$d/out" 2>"$d/log") || true
	if grep -q "^subnet up" "$d/out"; then
		# bring-up as ibsmd times it ("total"): the dump files written after it (for
		# verify's path SLs) are not part of it; peak memory includes them
		printf "%s %s" "$(sed -n 's/.*(total \([0-9.]*\) s).*/\1/p' "$d/out" | head -1)" \
			"$(awk '{ printf "%.0f", $2 / 1024 }' "$d/time")"
		echo " $(verdict "$d/dump/ibsmd-path-sl.dump") $(sed -n 's/.*routing \([0-9.]*\) s.*/\1/p' "$d/log" | head -1)" \
			"$(sed -n 's/.* \([0-9]*\) virtual layer(s) of .*/\1/p' "$d/log" | tail -1 | grep . ||
				{ grep -q "datelines on VL1/VL0.*step round the missing" "$d/log" && echo 4; } ||
				{ grep -q "datelines on VL1/VL0" "$d/log" && echo 2; } || echo 1)"
	else
		echo "fail - - - - -"
	fi
}

# the engines both have (ENGINES="minhop updn dnup ftree" by default; also sssp, dfsssp, nue,
# torus and file: forwarding tables from a dump of ibsmd's updn routes on the fabric);
# "worst" is the shift permutations' worst link load (1: every one free of congestion), "VLs"
# the virtual lanes the routes need (dfsssp's layers; 1 for the others)
printf "%-38s %6s %-6s | %10s %8s %5s %3s | %10s %8s %5s %3s %9s\n" fabric hosts engine "OpenSM s" \
	"MB" worst VLs "ibsmd s" "MB" worst VLs "route s"
for spec in "${SPECS[@]}"; do
	hosts=$("$FS" dump "$spec" | grep -c '^Ca')
	for engine in ${ENGINES:-minhop updn dnup ftree}; do
		start "$spec"
		SPEC=$spec
		if [ "$engine" = file ]; then
			# both load the same dump (ibroute's format), of ibsmd's updn on this fabric
			# (free of credit loops on any graph), which keeps its LIDs: one fabric for
			# both, the dump's routes in place already, so each reads the tables and
			# finds them right
			ibsmd_run updn >/dev/null
			cp "$WORK/ibsmd/dump/opensm-lfts.dump" "$WORK/lfts.dump"
		fi
		read -r os_s os_mb os_ok os_worst os_vls < <(opensm_run $engine)
		[ "$engine" = file ] || { stop && start "$spec"; }
		read -r ib_s ib_mb ib_ok ib_worst ib_route ib_vls < <(ibsmd_run $engine)
		stop
		printf "%-38s %6s %-6s | %10s %8s %5s %3s | %10s %8s %5s %3s %9s   %s/%s\n" "$spec" \
			"$hosts" "$engine" "$os_s" "$os_mb" "$os_worst" "$os_vls" "$ib_s" "$ib_mb" \
			"$ib_worst" "$ib_vls" "$ib_route" "$os_ok" "$ib_ok"
	done
done
