#!/usr/bin/env bash
# Does the performance manager delay a repair? On one 2,592-host fat tree, the time from a
# link going down (an uplink of leaf-1-1) until the SM has moved every route off it (the
# leaf's LFT sends no LID through the dead port: polled from fabricsim every 20 ms), with
# the performance manager off and sweeping every port's counters each second; ibsmd and
# OpenSM (its perfmgr, perfmgr_sweep_time_s 1) side by side, each the median of REPEATS
# pulls. Figures only, never a CI verdict.
# Usage: bench/pm_repair_vs_opensm.sh BUILD_DIR [SPEC] [REPEATS]
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC] [REPEATS]}" && pwd)
SPEC=${2:-fattree:radix=36,levels=3,hosts=2592}
REPEATS=${3:-5}
SCENARIO_NAME=bench-pm-repair
. "$(dirname "$0")/../test/scenario/lib.sh" "$BUILD"
FS="$BUILD/test/fabricsim/fabricsim"
LEAF=leaf-1-1
PORT=19

now() { date +%s.%N; }
on_port() { "$FS" ctl lft "$LEAF" | awk -v p="$PORT" '$2 == p' | wc -l; }
routed_through() { [ "$(on_port)" -gt 0 ]; }

start_sm() { # KIND PM(on|off)
	local kind=$1 pm=$2 dir="$WORK/$1-$2"
	mkdir -p "$dir"
	if [ "$kind" = ibsmd ]; then
		printf 'pm_interval: %s\nsweep_interval: 10\n' "$([ "$pm" = on ] && echo 1 || echo 0)" \
			>"$dir/ibsmd.yaml"
		(cd "$dir" && SIM_HOST=host-9 exec "$BUILD/daemon/ibsmd" --transport sim \
			--control-socket "$dir/control" --state-dir "$dir" --config "$dir/ibsmd.yaml" \
			>"$dir/out" 2>"$dir/log") &
	else
		: >"$dir/opensm.conf"
		[ "$pm" = on ] && printf 'perfmgr TRUE\nperfmgr_sweep_time_s 1\n' >"$dir/opensm.conf"
		(cd "$dir" && OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir SIM_HOST=host-9 LD_PRELOAD=$PRELOAD \
			exec opensm -F "$dir/opensm.conf" -f "$dir/log" >"$dir/out" 2>&1) &
	fi
	PIDS+=($!)
	SMPID=$!
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() { # KIND PM -> prints the median repair time
	local kind=$1 pm=$2 times=() i t0 t
	start_fabricsim "$SPEC" --max-clients 32
	start_sm "$kind" "$pm"
	wait_until 600 verify_passes || { echo "$kind: the subnet did not come up" >&2; return 1; }
	[ "$pm" = on ] && sleep 5 # the performance manager in full swing
	for ((i = 0; i < REPEATS; i++)); do
		routed_through || wait_until 60 routed_through || true
		t0=$(now)
		"$FS" ctl link down "$LEAF" "$PORT" >/dev/null
		until [ "$(on_port)" = 0 ]; do
			(($(echo "$(now) - $t0 > 60" | bc))) && break
			sleep 0.02
		done
		t=$(echo "$(now) - $t0" | bc)
		times+=("$t")
		"$FS" ctl link up "$LEAF" "$PORT" >/dev/null
		sleep 4 # the link is back and routed over again (the next pull needs routes on it)
	done
	if [ "$kind" = ibsmd ] && [ "$pm" = on ]; then
		# run() is called in a subshell: leave the figure in a file
		"$BUILD/cli/ibsa" --control "$WORK/$kind-$pm/control" --json counters 2>/dev/null |
			python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' >"$WORK/pm-ports" || true
	fi
	stop_pids "$SMPID"
	stop_sims
	printf '%s\n' "${times[@]}" | median
}

need opensm
echo "fabric $SPEC; repair = link $LEAF/$PORT down until no LID routes through it; median of $REPEATS"
declare -A R
for kind in ibsmd opensm; do
	for pm in off on; do
		R[$kind-$pm]=$(run "$kind" "$pm")
	done
done
printf '%-8s %16s %16s\n' "" "PM off (s)" "PM on, 1 s (s)"
printf '%-8s %16.3f %16.3f\n' ibsmd "${R[ibsmd-off]}" "${R[ibsmd-on]}"
printf '%-8s %16.3f %16.3f\n' OpenSM "${R[opensm-off]}" "${R[opensm-on]}"
echo "ibsmd's performance manager read $(cat "$WORK/pm-ports" 2>/dev/null || echo '?') ports each second"
