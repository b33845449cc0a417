#!/usr/bin/env bash
# fabricsim against Debian's ibsim on the same fabrics, side by side:
#   - SMPs answered per second (mad_rate: DR NodeInfo, 64 in flight, 0 to 2 hops)
#   - OpenSM 3.3.23 bring-up (opensm --once through libumad2sim.so) wall time
# Usage: bench/fabricsim_vs_ibsim.sh [BUILD_DIR] [SPEC...]
# Default fabrics: 2-level fat trees of 64 and 648 hosts, 3-level of 2,592. Figures only; no
# pass/fail. Needs scripts/dev's packages and a release build (cmake -S . -B build).
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
shift || true
SPECS=("$@")
[ ${#SPECS[@]} -gt 0 ] || SPECS=("fattree:radix=16,levels=2,hosts=64" "fattree:radix=36,levels=2"
	"fattree:radix=36,levels=3,hosts=2592")
FS=$BUILD/test/fabricsim/fabricsim
RATE=$BUILD/bench/mad_rate
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=$(mktemp -d /tmp/fabricsim-bench.XXXXXX)
SIM=
trap '[ -n "$SIM" ] && kill $SIM 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

wait_sock() {
	for _ in $(seq 1 300); do
		grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && return 0
		sleep 0.1
	done
	echo "simulator did not start" >&2
	return 1
}

start() { # ibsim|fabricsim NETFILE
	export IBSIM_SOCKNAME="bench-$1-$$"
	if [ "$1" = ibsim ]; then
		(cd "$WORK" && exec ibsim -s --no-console -N 40000 -S 4000 -P 200000 "$2" \
			>"$WORK/sim.log" 2>&1) &
	else
		(cd "$WORK" && exec "$FS" "$2" >"$WORK/sim.log" 2>&1) &
	fi
	SIM=$!
	wait_sock
}

stop() {
	kill $SIM 2>/dev/null || true
	wait $SIM 2>/dev/null || true
	SIM=
}

opensm_up() { # prints seconds to SUBNET UP
	local d="$WORK/osm"
	rm -rf "$d" && mkdir -p "$d"
	local t0 t1
	t0=$(date +%s.%N)
	(cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM timeout 900 \
		opensm --once -f "$d/osm.log" -d 2 >/dev/null 2>&1) || true
	t1=$(date +%s.%N)
	if grep -q "SUBNET UP" "$d/osm.log"; then
		echo "$t1 - $t0" | bc | awk '{ printf "%.2f", $1 }'
	else
		echo "fail"
	fi
}

printf "%-40s %8s | %14s %14s | %12s %12s\n" fabric hosts "ibsim MAD/s" "fabricsim MAD/s" \
	"ibsim up s" "fabricsim up s"
for spec in "${SPECS[@]}"; do
	"$FS" dump "$spec" >"$WORK/fabric.net"
	hosts=$(grep -c '^Ca' "$WORK/fabric.net")
	declare -A rate up
	for sim in ibsim fabricsim; do
		start $sim "$WORK/fabric.net"
		rate[$sim]=$("$RATE" -n 50000 -r 0 -r 0,1 -r 0,1,1 2>/dev/null | awk '{ print $3 }') ||
			rate[$sim]=fail
		stop
		start $sim "$WORK/fabric.net"
		up[$sim]=$(opensm_up)
		stop
	done
	printf "%-40s %8s | %14s %14s | %12s %12s\n" "$spec" "$hosts" "${rate[ibsim]}" \
		"${rate[fabricsim]}" "${up[ibsim]}" "${up[fabricsim]}"
done
