#!/usr/bin/env bash
# Repairs and storms, ibsmd next to OpenSM on the same fabricsim fabric in the same run.
#
# Single changes (each REPEATS times, medians and worst): an inter-switch link pulled, a
# host link pulled, a leaf switch lost (another each time, put back before the next). For each: the time from the `fabricsim ctl` command
# to the SM's next "subnet up" line (its own log timestamps), for ibsmd also from the first
# trap it logged to that line (what the SM took to handle it), the switches and LFT blocks it
# wrote (fabricsim's count of LFT Sets), the SMPs the SMAs answered, and whether a verify
# run right after passes (every pair reached, every port ACTIVE).
#
# Storms: one link on the SM's own directed route to a leaf flapping every 200 ms, and ten
# inter-switch links flapping at once, for STORM seconds each, while `fabricsim verify`
# samples the tables back to back. A pair a sample finds unreachable at a link that is down
# is the flapping link's own doing; any other unreachable pair (a route over a port not yet
# ACTIVE, a table left wrong, a host dropped) is the SM's. Also counted: the nodes the SM
# dropped ("no longer reachable"), its sweeps and the LFT blocks it wrote.
#
# Figures only, never a CI verdict.
# Usage: bench/repair_vs_opensm.sh BUILD_DIR [SPEC] [REPEATS] [STORM_SECONDS]
# SMS="ibsmd opensm" picks the SMs; ibsmd runs with its defaults (the link health policy
# quarantines a link after 10 transitions in 60 s) and, as "ibsmd-nq", without that policy
# (link_flap_threshold: 0), so that the storm figures show what the rest does alone.
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC] [REPEATS] [STORM_SECONDS]}" && pwd)
SPEC=${2:-fattree:radix=36,levels=3,hosts=2592}
REPEATS=${3:-5}
STORM=${4:-20}
SMS=${SMS:-ibsmd ibsmd-nq opensm}
SCENARIO_NAME=bench-repair
. "$(dirname "$0")/../test/scenario/lib.sh" "$BUILD"
FS="$BUILD/test/fabricsim/fabricsim"
SMHOST=host-9

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
worst() { sort -n | tail -1; }
sma_answers() { "$FS" ctl stats | sed -n 's/.*sma_answers \([0-9]*\).*/\1/p'; }
lft_sets() { "$FS" ctl lft-sets | grep -v '^total' | sort; }

start_sm() { # KIND
	local kind=$1 dir="$WORK/$1"
	mkdir -p "$dir"
	: >"$dir/log"
	if [ "$kind" = opensm ]; then
		: >"$dir/opensm.conf"
		(cd "$dir" && OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir SIM_HOST=$SMHOST LD_PRELOAD=$PRELOAD \
			exec opensm -d 2 -F "$dir/opensm.conf" -f "$dir/log" >"$dir/out" 2>&1) &
	else
		printf 'log_level: info\n' >"$dir/ibsmd.yaml"
		[ "$kind" = ibsmd-nq ] && echo 'link_flap_threshold: 0' >>"$dir/ibsmd.yaml"
		(cd "$dir" && SIM_HOST=$SMHOST exec "$BUILD/daemon/ibsmd" --transport sim \
			--control-socket "$dir/control" --state-dir "$dir" --config "$dir/ibsmd.yaml" \
			>"$dir/out" 2>"$dir/log") &
	fi
	PIDS+=($!)
	SMPID=$!
	SMLOG="$dir/log"
}

# the epoch seconds of every "subnet up" line in the SM's log (both log formats: ibsmd's
# time of day with milliseconds, OpenSM's "Mon DD HH:MM:SS usec")
up_times() {
	python3 - "$SMLOG" <<'PY'
import re, sys, time, datetime
today = datetime.date.today()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(\d\d):(\d\d):(\d\d)\.(\d{3}) notice sm: subnet up", line)
    if m:
        h, mi, s, ms = map(int, m.groups())
        t = datetime.datetime.combine(today, datetime.time(h, mi, s, ms * 1000))
        print(f"{t.timestamp():.6f}")
        continue
    m = re.match(r"(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6}) .*SUBNET UP", line)
    if m:
        mon, d, h, mi, s, us = m.groups()
        t = datetime.datetime.strptime(f"{today.year} {mon} {d} {h}:{mi}:{s}", "%Y %b %d %H:%M:%S")
        print(f"{t.timestamp() + int(us) / 1e6:.6f}")
PY
}
# how many "subnet up" lines (between changes and storms; never while a change is timed)
ups() { grep -Ec '^[0-9:.]{12} notice sm: subnet up|^[A-Z][a-z]{2} +[0-9]+ [0-9:]{8} [0-9]{6} .*SUBNET UP' "$SMLOG" || true; }

# handled: from the first trap the SM logged after line FROM of its log to its next "subnet
# up", both by its own timestamps (ibsmd's "trap N from LID L" at log_level info; "-" for
# OpenSM, whose log does not say when a trap arrived)
trap_to_up() {
	tail -n +"$(($1 + 1))" "$SMLOG" | python3 -c '
import re, sys
t0 = None
for line in sys.stdin:
    m = re.match(r"(\d\d):(\d\d):(\d\d)\.(\d{3}) ", line)
    if not m:
        continue
    h, mi, s, ms = map(int, m.groups())
    t = h * 3600 + mi * 60 + s + ms / 1000
    if t0 is None and re.search(r" sm: trap \d+ from LID", line):
        t0 = t
    elif t0 is not None and " sm: subnet up" in line:
        print(f"{t - t0:.3f}")
        sys.exit(0)
print("-")'
}

# wait_quiet: no new "subnet up" for 2 s (the SM is done with whatever came before)
wait_quiet() {
	local n m
	n=$(ups)
	while :; do
		sleep 2
		m=$(ups)
		[ "$m" = "$n" ] && return 0
		n=$m
	done
}

unreach() { # -> "unreachable unreachable_link_down"
	{ "$FS" verify --json 2>/dev/null || true; } |
		python3 -c 'import json,sys; u=json.load(sys.stdin)["unicast"]; print(u["unreachable"], u["unreachable_link_down"])'
}

# one change: CMD... is the fault, UNDO... (after --) puts it back; prints
# "seconds switches blocks smps verify"
one_change() {
	local args=() undo=()
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	shift
	undo=("$@")
	local n0 a0 t0 t1
	wait_quiet
	n0=$(ups)
	lft_sets >"$WORK/l0"
	a0=$(sma_answers)
	local lines0 follow fpid line
	lines0=$(wc -l <"$SMLOG")
	# wait for the SM's next "subnet up" as an event: tail -F follows the log by inotify and
	# read blocks, so nothing runs while the SM works. Asking the log every 50 ms instead
	# (a grep and a sleep started each time) took a core from the SM being timed: its
	# sweep after an inter-switch link down logged 27-40 ms under that, 19-35 ms without
	exec {follow}< <(exec tail -n +"$((lines0 + 1))" -F "$SMLOG" 2>/dev/null)
	fpid=$!
	t0=$(now)
	"$FS" ctl "${args[@]}" >/dev/null
	while read -r -t 30 line <&"$follow"; do
		[[ $line =~ ^[0-9:.]{12}\ notice\ sm:\ subnet\ up|SUBNET\ UP ]] && break
	done
	kill "$fpid" 2>/dev/null || true
	exec {follow}<&-
	t1=$(up_times | sed -n "$((n0 + 1))p")
	local v=FAIL
	verify_passes && v=ok
	sleep 1 # Sets still in flight after the line (OpenSM logs it before its last ones end)
	lft_sets >"$WORK/l1"
	local a1 sw blocks
	a1=$(sma_answers)
	read -r sw blocks < <(join "$WORK/l0" "$WORK/l1" | awk '$3 != $2 { n++; b += $3 - $2 } END { print n + 0, b + 0 }')
	echo "$(echo "${t1:-$t0} - $t0" | bc) $sw $blocks $((a1 - a0)) $v $(trap_to_up "$lines0")"
	"$FS" ctl "${undo[@]}" >/dev/null
}

# storm LINKS...: each "NODE PORT" flaps every 200 ms (down 200 ms, up 200 ms; the links
# start in turn 40 ms apart) for STORM seconds while verify samples; prints
# "samples samples_bad worst_total worst_sm dropped sweeps blocks"
storm() {
	local links=("$@") pids=() l n0 b0 end samples=0 bad=0 worst_t=0 worst_sm=0 u d
	wait_quiet
	n0=$(ups)
	b0=$("$FS" ctl lft-sets | awk '$1 == "total" { print $2 }')
	local dropped0
	dropped0=$(grep -c "no longer reachable" "$SMLOG" || true)
	end=$(($(date +%s) + STORM))
	for l in "${links[@]}"; do
		(
			while [ "$(date +%s)" -lt "$end" ]; do
				"$FS" ctl link down $l >/dev/null
				sleep 0.2
				"$FS" ctl link up $l >/dev/null
				sleep 0.2
			done
		) &
		pids+=($!)
		sleep 0.04
	done
	while [ "$(date +%s)" -lt "$end" ]; do
		read -r u d < <(unreach)
		samples=$((samples + 1))
		[ "$u" -gt "$worst_t" ] && worst_t=$u
		if [ $((u - d)) -gt 0 ]; then
			bad=$((bad + 1))
			[ $((u - d)) -gt "$worst_sm" ] && worst_sm=$((u - d))
		fi
	done
	wait "${pids[@]}"
	local dropped sweeps blocks
	dropped=$(($(grep -c "no longer reachable" "$SMLOG" || true) - dropped0))
	sweeps=$(($(ups) - n0))
	blocks=$(($("$FS" ctl lft-sets | awk '$1 == "total" { print $2 }') - b0))
	echo "$samples $bad $worst_t $worst_sm $dropped $sweeps $blocks"
}

# the link on ibsmd's directed route to leaf-5-1 (its last hop), from a first ibsmd run's
# log; the same link flaps under both SMs
dr_link() {
	local g route pg prev
	g=$("$FS" ctl lids | awk '$4 == "leaf-5-1" { print $1 }')
	route=$(grep "found Switch GUID $g at route" "$WORK/ibsmd/log" | head -1 | sed 's/.*route //')
	pg=$(grep "at route ${route%,*}\$" "$WORK/ibsmd/log" | head -1 | sed 's/.*GUID \(0x[0-9a-f]*\).*/\1/')
	prev=$("$FS" ctl lids | awk -v g="$pg" '$1 == g { print $4 }')
	echo "$prev ${route##*,}"
}

declare -A R
DRLINK=""
for kind in $SMS; do
	[ "$kind" = opensm ] && need opensm
	start_fabricsim "$SPEC" --max-clients 32
	start_sm "$kind"
	wait_until 600 verify_passes || { echo "$kind: the subnet did not come up" >&2; exit 1; }
	[ -n "$DRLINK" ] || DRLINK=$([ "$kind" = opensm ] && echo "agg-5-1 1" || dr_link)
	for c in isl host leaf; do
		: >"$WORK/$kind-$c"
		for ((i = 0; i < REPEATS; i++)); do
			# another link or leaf each time: the same one pulled five times in a
			# minute would be a flapping link, which ibsmd's link health policy
			# quarantines after 10 transitions
			case $c in
			isl) one_change link down leaf-1-1 $((19 + i)) -- link up leaf-1-1 $((19 + i)) ;;
			host) one_change link down leaf-2-1 $((1 + i)) -- link up leaf-2-1 $((1 + i)) ;;
			leaf) one_change node remove leaf-3-$((1 + i)) -- node add leaf-3-$((1 + i)) ;;
			esac >>"$WORK/$kind-$c"
		done
	done
	R[$kind-storm1]=$(storm "$DRLINK")
	ten=()
	for k in 1 2 3 4 5 6 7 8 9 10; do ten+=("leaf-$(((k - 1) % 8 + 1))-$((k + 2)) $((19 + k))"); done
	R[$kind-storm10]=$(storm "${ten[@]}")
	stop_pids "$SMPID"
	stop_sims
done

echo "fabric $SPEC; single changes $REPEATS times each (median / worst); storms $STORM s"
printf '%-9s %-5s %18s %18s %10s %11s %9s %7s\n' SM change "time s (med/worst)" \
	"trap->up (med/worst)" switches "LFT blocks" SMPs verify
for kind in $SMS; do
	for c in isl host leaf; do
		f="$WORK/$kind-$c"
		tu="-"
		[ "$kind" != opensm ] && tu="$(awk '{ print $6 }' "$f" | median) / $(awk '{ print $6 }' "$f" | worst)"
		printf '%-9s %-5s %8.3f / %7.3f %18s %10s %11s %9s %7s\n' "$kind" "$c" \
			"$(awk '{ print $1 }' "$f" | median)" "$(awk '{ print $1 }' "$f" | worst)" "$tu" \
			"$(awk '{ print $2 }' "$f" | median)" "$(awk '{ print $3 }' "$f" | median)" \
			"$(awk '{ print $4 }' "$f" | median)" \
			"$(awk '$5 == "ok" { n++ } END { print n + 0 }' "$f")/$(wc -l <"$f")"
	done
done
echo "storms: samples, samples with a pair unreachable that no down link explains, worst"
echo "unreachable pairs (all / not at a down link), nodes dropped, subnet-up sweeps, LFT blocks"
printf '%-9s %-22s %8s %8s %10s %10s %8s %7s %8s\n' SM storm samples bad worst worst-SM dropped sweeps blocks
for kind in $SMS; do
	for s in storm1 storm10; do
		read -r a b c d e f g <<<"${R[$kind-$s]}"
		name=$([ $s = storm1 ] && echo "1 link ($DRLINK)" || echo "10 links")
		printf '%-9s %-22s %8s %8s %10s %10s %8s %7s %8s\n' "$kind" "$name" "$a" "$b" "$c" "$d" \
			"$([ "$kind" = opensm ] && echo - || echo "$e")" "$f" "$g"
	done
done
