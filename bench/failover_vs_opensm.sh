#!/usr/bin/env bash
# Takeover and handover times, ibsmd against OpenSM, on one fabricsim fabric in one run.
#
# takeover: a master and a standby of the same kind are up; kill -9 the master; the time
#   until the standby answers SMInfo as MASTER (sminfo, every 0.1 s) and until fabricsim
#   verify passes again, and the LFT blocks written meanwhile (blocks that were right).
# handover: the master is up with priority 5; an SM of the same kind starts with priority
#   12; the time from its start until it answers as MASTER and the old one as STANDBY.
# OpenSM runs with its defaults (poll 10 s, 4 retries) and tuned (1 s, 2 retries); ibsmd
# with its defaults (poll 0.5 s, 3 retries). Figures only, never a CI verdict.
# Usage: bench/failover_vs_opensm.sh BUILD_DIR [SPEC]
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC]}" && pwd)
SPEC=${2:-fattree:radix=36,levels=3,hosts=2592}
SCENARIO_NAME=bench-failover
. "$(dirname "$0")/../test/scenario/lib.sh" "$BUILD"
need opensm
need sminfo
FS="$BUILD/test/fabricsim/fabricsim"

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
lid_of() { "$FS" ctl lids | awk -v h="$1" '$4 == h { print $2 }'; }
state_of() {
	on_sim host-9 sminfo "$1" 2>/dev/null | sed -n 's/.* state \([0-9]\) .*/\1/p' | grep . || echo -
}
lft_total() { "$FS" ctl lft-sets | awk '/^total/ { print $2 }'; }

# start KIND NAME HOST PRIORITY TUNING: an ibsmd or an OpenSM; its pid in $LAST
start() {
	local kind=$1 name=$2 host=$3 prio=$4 tuning=$5 dir="$WORK/$2"
	mkdir -p "$dir"
	if [ "$kind" = ibsmd ]; then
		printf 'sm_priority: %s\n' "$prio" >"$dir/ibsmd.yaml"
		(cd "$WORK" && SIM_HOST=$host exec "$BUILD/daemon/ibsmd" --transport sim --control-socket "" \
			--state-dir "$dir" --config "$dir/ibsmd.yaml" >"$dir/out" 2>"$dir/log") &
	else
		: >"$dir/opensm.conf"
		[ "$tuning" = tuned ] &&
			printf 'sminfo_polling_timeout 1000\npolling_retry_number 2\n' >"$dir/opensm.conf"
		(cd "$dir" && OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir SIM_HOST=$host LD_PRELOAD=$PRELOAD \
			exec opensm -p "$prio" -F "$dir/opensm.conf" -f "$dir/log" >"$dir/out" 2>&1) &
	fi
	LAST=$!
	PIDS+=($LAST)
}
wait_state() { # LID STATE TIMEOUT
	local end=$((SECONDS + $3))
	until [ "$(state_of "$1")" = "$2" ]; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

run() { # KIND TUNING
	local kind=$1 tuning=$2
	start_fabricsim "$SPEC" --max-clients 32
	local la lb
	start "$kind" A host-1 10 "$tuning"
	local a=$LAST
	until la=$(lid_of host-1) && [ -n "$la" ] && [ "$la" != 0 ]; do sleep 0.2; done
	wait_state "$la" 3 300 || { echo "$kind: A never master"; stop_sims; return; }
	wait_until 300 verify_passes || true
	start "$kind" B host-2 5 "$tuning"
	local b=$LAST
	sleep 1
	lb=$(lid_of host-2)
	wait_state "$lb" 2 120 || { echo "$kind: B never standby"; stop_sims; return; }
	sleep 2
	local blocks=$(lft_total) t0 master up
	t0=$(now)
	kill -9 "$a"
	wait_state "$lb" 3 300 && master=$(since "$t0") || master=-
	wait_until 300 verify_passes && up=$(since "$t0") || up=-
	local written=$(($(lft_total) - blocks))
	# handover: B (5) is master; A comes back at 12
	sleep 2
	t0=$(now)
	start "$kind" A2 host-1 12 "$tuning"
	local h=-
	if wait_state "$la" 3 300 && wait_state "$lb" 2 60; then h=$(since "$t0"); fi
	printf '| %s | %s | %s s | %s s | %s | %s s |\n' "$kind" "$tuning" \
		"$(printf '%.2f' "$master" 2>/dev/null || echo -)" "$(printf '%.2f' "$up" 2>/dev/null || echo -)" \
		"$written" "$(printf '%.2f' "$h" 2>/dev/null || echo -)"
	stop_sims
}

echo "fabric: $SPEC"
echo "| SM | polling | takeover: MASTER after kill -9 | subnet verified | LFT blocks written | handover to a new priority-12 SM |"
echo "|---|---|---|---|---|---|"
run ibsmd default
run opensm tuned
run opensm default
