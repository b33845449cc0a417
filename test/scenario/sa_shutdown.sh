#!/usr/bin/env bash
# Stopping ibsmd while a Report waits for an acknowledgement that will not come (its
# subscriber stopped answering, then a node left): the transaction is cancelled while the SA
# its callback uses is still there. A use-after-free in on_report_answered was reported at
# exactly this point (issue 15); under the test build's AddressSanitizer it would fail here.
# Usage: sa_shutdown.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
subs() { SIM_HOST=host-2 "$IBSA" --transport sim --json informinfo | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
subscribed() { [ "$(subs)" = 2 ]; }

start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
(SIM_HOST=host-1 exec "$IBSA" --transport sim --json events --count 5 --timeout 60 \
	>"$WORK/events.json" 2>"$WORK/events.err") &
EV=$!
PIDS+=($EV)
wait_until 10 subscribed || fail "ibsa events did not subscribe"
kill -STOP "$EV"
"$FS" ctl node remove host-4 >/dev/null
wait_until 10 grep -q "no longer reachable" "$WORK/ibsmd.log" || fail "the node's leaving was not seen"
# the Report to the stopped subscriber is sent, and cannot be acknowledged
reports_sent() { "$IBSA" --control "$WORK/control" --json status |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["sa"]["reports_sent"])'; }
report_out() { [ "$(reports_sent)" -ge 1 ]; }
wait_until 10 report_out || fail "no Report sent to the subscriber"
kill -TERM "$IBSMD_PID"
rc=0
wait "$IBSMD_PID" || rc=$?
kill -CONT "$EV" 2>/dev/null || true
[ "$rc" = 0 ] || fail "ibsmd exited with $rc on SIGTERM: $(grep -E 'AddressSanitizer|SUMMARY|runtime error' "$WORK/ibsmd.log" | head -3)"
! grep -qE "AddressSanitizer|runtime error" "$WORK/ibsmd.log" || fail "a sanitizer report at shutdown"
echo "SIGTERM with a Report unacknowledged: clean exit: ok"
