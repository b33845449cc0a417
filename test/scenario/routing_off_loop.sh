#!/usr/bin/env bash
# Routing runs off the event loop, and the SA keeps answering from what the switches hold:
# - while nue reroutes a 2,592-host tree, ibsa status says so, and a PathRecord asked
#   between two such answers gets its record (with routing on the loop, status could
#   never answer "routing");
# - during a heavy sweep's discovery (which forgets every link before finding it again)
#   PathRecords are still answered, from the last completed model (they got "0 records");
# - a reload (SIGHUP) during routing waits for it and takes the new engine; SIGTERM during
#   routing exits cleanly (the thread reads the model that the exit frees);
# and after each, fabricsim verify passes.
# Usage: routing_off_loop.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
IBSA="$BUILD/cli/ibsa"
export IBSMD_CONTROL="$WORK/control"

config() { # ENGINE
	printf 'routing_engine: "%s"\nsweep_interval: 0\nlog_level: info\n' "$1" >"$WORK/ibsmd.yaml"
}
state() { "$IBSA" status 2>/dev/null | sed -n 's/^sweeps: *\([0-9]*\)\([^;]*\);.*/\1\2/p'; }
path_answered() { # one PathRecord host-1 -> host-2000, asked from host-1
	SIM_HOST=host-1 "$IBSA" --transport sim paths "host-1 HCA-1" "host-2000 HCA-1" 2>/dev/null |
		has "^  dlid"
}
idle() { [ -n "$(state)" ] && ! state | has "under way"; }
# wait_for PATTERN [once]: poll status quickly until it matches and print it; with once,
# give up when a sweep seen under way has ended without matching
wait_for() {
	local s seen=0
	for _ in $(seq 1 1500); do
		s=$(state)
		if grep -q "$1" <<<"$s"; then
			echo "$s"
			return 0
		fi
		if grep -q "under way" <<<"$s"; then
			seen=1
		elif [ $seen = 1 ] && [ -n "${2:-}" ]; then
			return 1
		fi
		sleep 0.02
	done
	return 1
}

start_fabricsim "fattree:radix=36,levels=3,hosts=2592"
config nue
SIM_HOST=host-1 IBSMD_UP_TIMEOUT=300 start_ibsmd --config "$WORK/ibsmd.yaml"
path_answered || fail "no PathRecord once up"

# answered_during STAGE COMMAND...: run the command (it starts a sweep) until status is
# caught saying STAGE both before and after a PathRecord's answer; 8 tries
answered_during() {
	local stage=$1 try s1 s2
	shift
	for try in $(seq 1 8); do
		"$@" >/dev/null || fail "$*"
		s1=$(wait_for "under way: $stage" once) || {
			wait_until 120 idle
			continue
		}
		path_answered || fail "no PathRecord during $stage (status: $s1)"
		s2=$(state)
		wait_until 120 idle || fail "the sweep did not end"
		if [ "$s2" = "$s1" ]; then
			echo "  try $try: status said \"$s1\" before and after the PathRecord's answer"
			return 0
		fi
	done
	fail "never saw a PathRecord answered between two status answers saying $stage"
}

echo "== a PathRecord answered while nue routes"
answered_during routing "$IBSA" reroute
grep -q "routed by nue" "$WORK/ibsmd.log" || fail "not routed by nue"
check_verify 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null

echo "== PathRecords during a heavy sweep's discovery"
# a millisecond per hop makes discovery last seconds rather than a fraction of one, so that
# the status is caught saying so whatever the machine's pace
"$BUILD/test/fabricsim/fabricsim" ctl latency 1000 0 >/dev/null
answered_during discovery "$IBSA" sweep heavy
"$BUILD/test/fabricsim/fabricsim" ctl latency 0 0 >/dev/null

echo "== SIGHUP during routing: the reload waits for it, then updn routes"
config updn
"$IBSA" reroute >/dev/null
wait_for "under way: routing" >/dev/null || fail "no routing seen after ibsa reroute"
kill -HUP "$IBSMD_PID"
wait_until 120 grep -q "routed by updn" "$WORK/ibsmd.log" ||
	fail "the reload did not take: $(grep -E 'config|routing' "$WORK/ibsmd.log" | tail -3)"
wait_until 120 idle || fail "no sweep end after the reload"
check_verify 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' >/dev/null
echo "  reloaded and routed by updn, verify clean"

echo "== SIGTERM during routing"
config nue
kill -HUP "$IBSMD_PID"
wait_until 120 grep -q "routed by nue" "$WORK/ibsmd.log" || fail "nue not back"
wait_until 120 idle
"$IBSA" reroute >/dev/null
wait_for "under way: routing" >/dev/null || fail "no routing seen after ibsa reroute"
kill -TERM "$IBSMD_PID"
rc=0
for _ in $(seq 1 300); do
	kill -0 "$IBSMD_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$IBSMD_PID" 2>/dev/null && fail "ibsmd still running 30 s after SIGTERM"
wait "$IBSMD_PID" || rc=$?
[ $rc = 0 ] || fail "ibsmd exited $rc on SIGTERM during routing"
! grep -q "AddressSanitizer\|runtime error" "$WORK/ibsmd.log" || fail "sanitizer report on exit"
echo "  exited 0, nothing reported"
