#!/usr/bin/env bash
# Bring-up on Debian's ibsim, ibsmd next to OpenSM in the same run: the fabric (a fabricsim
# generator spec, written out as a net file) is loaded by ibsim afresh for each SM; each
# runs --once through libumad2sim.so (ibsmd with its umad transport, as on hardware), and
# the wall time and peak memory of the whole process are printed, with ibsmd's own account
# of its sweep. Figures only, never a CI verdict.
# Usage: bench/ibsim_bringup.sh BUILD_DIR [SPEC...]
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC...]}" && pwd)
shift
SPECS=("$@")
[ ${#SPECS[@]} -gt 0 ] || SPECS=("fattree:radix=48,levels=3,hosts=20736")
SCENARIO_NAME=bench-ibsim
. "$(dirname "$0")/../test/scenario/lib.sh" "$BUILD"
need ibsim
need opensm
[ -f "$UMAD2SIM" ] || fail "$UMAD2SIM missing (package ibsim-utils)"

ibsim_up() { # NETFILE: ibsim with room for the fabric
	local nodes ports
	nodes=$(grep -c '^\(Switch\|Ca\|Hca\)' "$1")
	ports=$(awk '/^(Switch|Ca|Hca)/ { n += $2 + 1 } END { print n + 16 }' "$1")
	# -L: its LFTs hold 30,720 LIDs unless told; it crashed on a 40,000-host tree without
	(cd "$WORK" && exec ibsim -s --no-console -N $((nodes + 16)) -S $((nodes + 16)) -P "$ports" \
		-L $(((nodes / 64 + 2) * 64)) "$1" \
		>"$WORK/ibsim.log" 2>&1) &
	PIDS+=($!)
	wait_for_socket
}

timed() { # OUT COMMAND...: wall seconds and peak RSS (MB) of COMMAND into OUT
	local out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" || true
}

printf '%-40s %8s %14s %14s %14s %12s\n' fabric hosts "OpenSM s" "OpenSM MB" "ibsmd s" "ibsmd MB"
for spec in "${SPECS[@]}"; do
	net="$WORK/fabric.net"
	"$BUILD/test/fabricsim/fabricsim" dump "$spec" >"$net"
	hosts=$(grep -c '^\(Ca\|Hca\)' "$net")

	ibsim_up "$net"
	rm -rf "$WORK/state" "$WORK"/sys-*
	(cd "$WORK" && timed "$WORK/ibsmd.time" env SIM_HOST=host-1 LD_PRELOAD="$UMAD2SIM" \
		"$BUILD/daemon/ibsmd" --transport umad --once --state-dir "$WORK/state" \
		>"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log")
	grep -q "^subnet up" "$WORK/ibsmd.out" || fail "ibsmd: $(cat "$WORK/ibsmd.out")"
	sweep=$(sed -n 's/.*(total \([0-9.]*\) s).*/\1/p' "$WORK/ibsmd.out")
	stop_sims

	ibsim_up "$net"
	rm -rf "$WORK"/sys-* "$WORK/osm"
	mkdir -p "$WORK/osm"
	(cd "$WORK" && OSM_TMP_DIR="$WORK/osm" OSM_CACHE_DIR="$WORK/osm" SIM_HOST=host-1 \
		timed "$WORK/opensm.time" env LD_PRELOAD="$UMAD2SIM" \
		opensm --once -f "$WORK/osm/opensm.log" >"$WORK/opensm.out" 2>&1)
	grep -q "SUBNET UP" "$WORK/osm/opensm.log" || fail "OpenSM did not bring the subnet up"
	stop_sims

	read -r ow om <"$WORK/opensm.time"
	read -r iw im <"$WORK/ibsmd.time"
	printf '%-40s %8s %14s %14s %14s %12s\n' "$spec" "$hosts" "$ow" "$((om / 1024))" \
		"$iw ($sweep)" "$((im / 1024))"
done
echo "ibsmd s: the process's wall time (its sweep's own total in brackets)"
