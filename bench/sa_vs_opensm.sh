#!/usr/bin/env bash
# PathRecord answers per second from ibsmd's SA and OpenSM 3.3.23's, on the same fabricsim
# fabric, side by side: SubnAdmGet(PathRecord) by SLID and DLID from host-1 to every other
# host in turn, one at a time (latency) and 64 in flight (throughput), with the CPU time each
# SA process spends per answer in the 64-in-flight run (and what the simulator and the client
# spend, the same for both); and ibsmd's path code in process (sa_path_inproc), without MADs. Both SAs run as
# daemons; OpenSM under libumad2sim.so with -d 2 (or its log, which says when it is up, stays
# buffered), as the Debian packages run it on a simulator.
# Usage: bench/sa_vs_opensm.sh [BUILD_DIR] [SPEC] [COUNT]   (a release build: bench/README.md)
set -euo pipefail
BUILD=$(cd "${1:-build-rel}" && pwd)
SPEC=${2:-fattree:radix=36,levels=2}
COUNT=${3:-100000}
FS=$BUILD/test/fabricsim/fabricsim
RATE=$BUILD/bench/sa_path_rate
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=$(mktemp -d /tmp/sa-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
export IBSIM_SOCKNAME="sa-bench-$$"

start_sim() {
	(cd "$WORK" && exec "$FS" "$SPEC" >"$WORK/sim.log" 2>&1) &
	PIDS+=($!)
	for _ in $(seq 1 300); do
		grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && return 0
		sleep 0.1
	done
	echo "fabricsim did not start" >&2
	exit 1
}
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	PIDS=()
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system, 1/100 s
measure() { # SA_PID -> "lat-rate tput-rate sa-us-per-answer sim+client-us-per-answer"
	local hosts sm_host lids
	hosts=$("$FS" ctl lids | awk '$4 ~ /^host-/' | wc -l)
	lids=$("$FS" ctl lids | awk -v h="host-$hosts" '$4 ~ /^host-/ && $4 != "host-1" && $4 != h { print $2 }')
	local one many sa0 sim0 sa1 sim1 rest
	one=$(SIM_HOST=host-1 "$RATE" -n $((COUNT / 20)) -w 1 $lids | awk '{ print $3 }') || one=fail
	sa0=$(cpu_ticks "$1")
	sim0=$(cpu_ticks "${PIDS[0]}")
	# the client's own CPU time, from time(1)
	rest=$( { SIM_HOST=host-1 /usr/bin/time -f "%U %S" "$RATE" -n "$COUNT" -w 64 $lids >"$WORK/rate.out"; } 2>&1 | tail -1)
	many=$(awk '{ print $3 }' "$WORK/rate.out")
	[ -n "$many" ] || many=fail
	sa1=$(cpu_ticks "$1")
	sim1=$(cpu_ticks "${PIDS[0]}")
	echo "$one $many $(awk -v a="$sa0" -v b="$sa1" -v n="$COUNT" 'BEGIN { printf "%.2f", (b - a) * 1e4 / n }') $(awk -v a="$sim0" -v b="$sim1" -v c="$rest" -v n="$COUNT" 'BEGIN { split(c, x, " "); printf "%.2f", ((b - a) / 100 + x[1] + x[2]) * 1e6 / n }')"
}
wait_for() { # SECONDS FILE PATTERN
	for _ in $(seq 1 $(($1 * 10))); do
		grep -q "$3" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

start_sim
N=$("$FS" ctl lids | awk '$4 ~ /^host-/' | wc -l)
SMHOST="host-$N" # the SM on the last host, the queries from host-1
mkdir -p "$WORK/osm"
(cd "$WORK/osm" && SIM_HOST=$SMHOST OSM_TMP_DIR=$WORK/osm OSM_CACHE_DIR=$WORK/osm LD_PRELOAD=$SHIM \
	exec opensm -d 2 -f "$WORK/osm/osm.log" >/dev/null 2>&1) &
PIDS+=($!)
wait_for 300 "$WORK/osm/osm.log" "SUBNET UP" || { echo "OpenSM did not come up" >&2; exit 1; }
read -r O1 O64 OCPU OREST <<<"$(measure "${PIDS[1]}")"
stop_all

start_sim
(cd "$WORK" && SIM_HOST=$SMHOST exec "$BUILD/daemon/ibsmd" --transport sim --state-dir "$WORK/state" --control-socket "" \
	--sweep-interval 0 >"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log") &
PIDS+=($!)
wait_for 300 "$WORK/ibsmd.log" "subnet up" || { echo "ibsmd did not come up" >&2; exit 1; }
read -r I1 I64 ICPU IREST <<<"$(measure "${PIDS[1]}")"
stop_all

# the SA's path code alone, in process, on a fresh copy of the fabric
start_sim
INPROC=$(SIM_HOST=$SMHOST "$BUILD/bench/sa_path_inproc" -n $((COUNT * 20)) | awk '{ print $3 }') ||
	INPROC=fail
stop_all

printf "%-34s %14s %14s %16s %18s\n" "PathRecord Gets per second" "1 in flight" "64 in flight" \
	"SA CPU us/answer" "sim+client us/ans"
printf "%-34s %14s %14s %16s %18s\n" "OpenSM 3.3.23 ($SPEC)" "$O1" "$O64" "$OCPU" "$OREST"
printf "%-34s %14s %14s %16s %18s\n" "ibsmd ($SPEC)" "$I1" "$I64" "$ICPU" "$IREST"
printf "%-34s %14s\n" "ibsmd in process, no MADs" "$INPROC"
