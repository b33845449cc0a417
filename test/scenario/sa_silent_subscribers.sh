#!/usr/bin/env bash
# Subscribers that never acknowledge a Report cost only their own Reports (issue 33): 20
# hosts subscribe to every trap and then stop answering (SIGSTOP: still attached, the
# Reports reach them, no ReportResp comes back), a host sends 1,100 traps (forwarded to
# each: 22,000 Reports), and the SM's own work stays as quick as ever: its MAD window is
# not taken by Reports (`ibsa status`: MADs in flight) and a pulled spine cable is routed
# around within the usual time. Before, the Reports went through the SM's window and queue:
# 64 in flight for the 4 attempts of each, the SM's SMPs queued behind 22,000 of them.
# Each silent subscriber's backlog is bounded: the oldest Reports are dropped, with a
# warning in the log and a count in the metrics.
# Usage: sa_silent_subscribers.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
SWEEP=1
NSUBS=20
ctl() { "$IBSA" --control "$WORK/control" "$@"; }
subs() {
	SIM_HOST=host-30 "$IBSA" --transport sim --json informinfo |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
subs_are() { [ "$(subs)" = "$1" ]; }
# the largest "MADs in flight" (the SM's window), looked at over and over until the SM has
# swept twice (light or full) with the Reports pending: its own work went through meanwhile
inflight_max() {
	local m=0 v n to end
	sweeps='str(s["mads"]["inflight"]) + " " + str(s["sweeps"]["count"] + s["sweeps"]["light"])'
	read -r _ n <<<"$(status_field "$sweeps")"
	to=$((n + 2)) end=$(($(date +%s%3N) + $(slow_ms 20)))
	while [ "$n" -lt "$to" ]; do
		[ "$(date +%s%3N)" -lt "$end" ] || fail "the SM did not sweep twice in 20 s"
		read -r v n <<<"$(status_field "$sweeps")"
		[ "$v" -gt "$m" ] && m=$v
	done
	echo "$m"
}

start_fabricsim "fattree:radix=8,levels=2" # 4 spines, 8 leaves, 32 hosts
SIM_HOST=host-32 start_ibsmd --sweep-interval $SWEEP --config <(printf 'metrics_interval: 1\n')
wait_until 10 verify_passes || fail "not up: $("$FS" verify | tail -3)"

SILENT=()
for i in $(seq 1 $NSUBS); do
	(SIM_HOST=host-$i exec "$IBSA" --transport sim events --trap 0xffff --timeout 600 \
		>/dev/null 2>"$WORK/events-$i.err") &
	SILENT+=($!)
	PIDS+=($!)
done
wait_until 30 subs_are $NSUBS || fail "$NSUBS subscriptions to every trap not listed: $(subs)"
kill -STOP "${SILENT[@]}"
echo "$NSUBS hosts subscribed to every trap, then stopped answering"

# traps 129 naming another host's port (not the sender's own: no babbling-port hold), each
# forwarded to every subscriber
(cd "$WORK" && SIM_HOST=host-25 "$BUILD/test/sa_probe" --trap "$(lid_of host-26)" 1 1100 \
	>"$WORK/traps.out" 2>&1) || fail "sa_probe --trap: $(cat "$WORK/traps.out")"
traps() { ctl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["traps"])'; }
traps_at_least() { [ "$(traps)" -ge "$1" ]; }
wait_until 10 traps_at_least 1100 ||
	fail "the SM did not get the 1,100 traps: $(traps)"
echo "$(cat "$WORK/traps.out") sent: $((NSUBS * 1100)) Reports to silent subscribers"

m=$(inflight_max)
[ "$m" -lt 32 ] || fail "the SM's MAD window is taken: $m MADs in flight with nothing to sweep"
echo "the SM's window meanwhile: at most $m MADs in flight"

# rerouted within the usual time: from the pull to the daemon's "subnet up" after it, on the
# daemon's clock (the pull's moment is read from the same clock)
lines=$(wc -l <"$WORK/ibsmd.log")
pulled=$(date +%H:%M:%S.%3N)
"$FS" ctl link down leaf-1 5 >/dev/null # a spine cable: routes through it must move
wait_until 30 verify_passes || fail "not rerouted: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
up=$(tail -n +$((lines + 1)) "$WORK/ibsmd.log" | grep -m1 "subnet up") || fail "no subnet up after the pull"
ms=$(awk -v a="$(log_seconds "$pulled")" -v b="$(log_seconds "$up")" \
	'BEGIN { d = b - a; if (d < 0) d += 86400; printf "%d", d * 1000 }')
[ "$ms" -le "$(slow_ms $((2 * SWEEP + 3)))" ] || fail "rerouted $ms ms after the pull, not within $((2 * SWEEP + 3)) s"
echo "spine cable pulled: rerouted in $ms ms"

grep -q "dropped unsent: the subscriber leaves too many unacknowledged" "$WORK/ibsmd.log" ||
	fail "no word of the Reports dropped from a silent subscriber's backlog"
metric() { awk -v n="ibsmd_$1" '$1 == n { print $2 }' "$WORK/state/ibsmd.prom"; }
dropped_in_file() { [ "$(metric sa_reports_dropped_total)" -gt 0 ]; }
wait_until 10 dropped_in_file || fail "metrics: $(grep sa_reports "$WORK/state/ibsmd.prom")"
[ "$(metric sa_reports_in_flight)" -le 16 ] || fail "metrics: $(grep sa_reports "$WORK/state/ibsmd.prom")"
echo "a silent subscriber's oldest Reports dropped, with a warning: ok ($(metric sa_reports_dropped_total) dropped, $(metric sa_reports_in_flight) in flight, $(metric sa_reports_waiting) waiting)"

# a subscriber that answers still hears of a change
(SIM_HOST=host-27 exec "$IBSA" --transport sim --json events --trap 65 --count 1 --timeout 30 \
	>"$WORK/events.json" 2>"$WORK/events.err") &
EV=$!
PIDS+=($EV)
wait_until 10 subs_are $((NSUBS + 1)) || fail "host-27's subscription not listed: $(subs)"
"$FS" ctl node remove host-28 >/dev/null
wait "$EV" || fail "a live subscriber got no Report of trap 65: $(cat "$WORK/events.err")"
grep -q '"trap":65' "$WORK/events.json" || fail "Report: $(cat "$WORK/events.json")"
echo "a subscriber that answers got its Report meanwhile: ok"
{
	kill -KILL "${SILENT[@]}"
	wait "${SILENT[@]}"
} 2>/dev/null || true # stopped: TERM would wait for SIGCONT
