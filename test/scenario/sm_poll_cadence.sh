#!/usr/bin/env bash
# A standby finds its master dead within (sm_poll_retries + 1) poll intervals of its death where
# the kernel's MAD layer times the polls (the preload's rules: a lost poll comes back at its
# timeout, one interval after it went, just after the next poll's tick). The standby used to
# skip that tick, so each lost poll cost two intervals: with 5 retries of 500 ms a dead master
# was found 5-5.5 s after its death instead of 3 s at most. Judged on the simulator's clock
# (the master's SM client detaches) and the standby's own log line, not the script's pace.
# Usage: sm_poll_cadence.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=8,levels=2" --max-clients 16 -vv
export IBSMD_TRANSPORT=umad
POLL=("sm_poll_interval_ms: 500" "sm_poll_retries: 5")
start_named_ibsmd A host-1 10 "${POLL[@]}"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-2 5 "${POLL[@]}"
wait_until 30 grep -q "standing by" "$WORK/B.log" || fail "B does not stand by"
kill -9 "$PID_A"
wait_until 30 grep -q "missed 5 polls in a row" "$WORK/B.log" ||
	fail "B did not find A dead: $(grep election "$WORK/B.log" | tail -3)"
died=$(log_ms "$WORK/fabricsim.log" 'node "host-1"\) detached: an SM detached') ||
	fail "fabricsim did not log A's SM detaching"
found=$(log_ms "$WORK/B.log" "missed 5 polls in a row")
took=$(ms_between "$died" "$found")
# 6 intervals at most (a poll just missed, then 5 lost), and the loop's latency
max=$((3000 + $(slow_ms 0.4)))
echo "B found A dead $took ms after A's SM detached (at most $max)"
[ "$took" -le "$max" ] || fail "B took $took ms to find A dead (at most $max): a lost poll costs more than one interval"
wait_until 30 grep -q "this SM is master" "$WORK/B.log" || fail "B did not take over"
echo PASS
