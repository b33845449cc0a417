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
# the largest "MADs in flight" (the SM's window) over 10 looks, 0.2 s apart
inflight_max() {
	local m=0 v
	for _ in $(seq 1 10); do
		v=$(ctl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["mads"]["inflight"])')
		[ "$v" -gt "$m" ] && m=$v
		sleep 0.2
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

start=$(date +%s%3N)
"$FS" ctl link down leaf-1 5 >/dev/null # a spine cable: routes through it must move
wait_until $((2 * SWEEP + 3)) verify_passes ||
	fail "not rerouted within $((2 * SWEEP + 3)) s: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
echo "spine cable pulled: rerouted in $(($(date +%s%3N) - start)) ms"

grep -q "dropped unsent: the subscriber leaves too many unacknowledged" "$WORK/ibsmd.log" ||
	fail "no word of the Reports dropped from a silent subscriber's backlog"
metric() { awk -v n="ibsmd_$1" '$1 == n { print $2 }' "$WORK/state/ibsmd.prom"; }
sleep 1.5 # a fresh metrics file
[ "$(metric sa_reports_dropped_total)" -gt 0 ] && [ "$(metric sa_reports_in_flight)" -le 16 ] ||
	fail "metrics: $(grep sa_reports "$WORK/state/ibsmd.prom")"
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
