#!/usr/bin/env bash
# An SM that outranks the one deciding, and answers late, is waited for. A (priority 10) is
# master, B (5) and C (1) stand by. B is stopped (SIGSTOP: a process that does not get the
# CPU, as a new master in its first sweep on a loaded machine) and A is killed: C misses A's
# polls and sweeps to decide, and B does not answer C's question. B runs again once C says it
# is waiting for B (the old code decided at that point, without waiting), well inside the
# time C waits (sm_poll_retries polls): C must never make itself master, and B ends master
# with C standing by for it.
# Usage: sm_election_late.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
start_named_ibsmd A host-1 10 "sweep_interval: 2"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-2 5 "sweep_interval: 2"
# C starts once B stands by: a standby sweeps only before it stands by, so a C that came up
# first on a loaded machine never met B (one CI run failed so)
wait_until 30 grep -q "standing by" "$WORK/B.log" || fail "B does not stand by"
start_named_ibsmd C host-3 1 "sweep_interval: 2" "sm_poll_retries: 10"
wait_until 30 grep -q "standing by" "$WORK/C.log" || fail "C does not stand by"
# C must know B (B answered C's question) for B to be the SM it waits for
wait_until 30 grep -q "SM GUID 0x0000000000100003 (LID [0-9]*): [A-Z]*, priority 5" "$WORK/C.log" ||
	fail "C never heard from B"
kill -STOP "$PID_B"
kill -9 "$PID_A"
wait_until 30 grep -q "has not answered this sweep's question" "$WORK/C.log" || {
	kill -CONT "$PID_B"
	grep -q "this SM is master" "$WORK/C.log" &&
		fail "C made itself master while B, which outranks it, did not answer: $(grep -h 'election' "$WORK/C.log" | tail -4)"
	fail "C never waited for B: $(grep -h 'election' "$WORK/C.log" | tail -4)"
}
kill -CONT "$PID_B"
wait_until 30 grep -q "this SM is master" "$WORK/B.log" || fail "B did not become master"
# C's decision is made once it stands by for B (or it made itself master: checked below)
wait_until 30 grep -Eq "standing by: SM GUID 0x0000000000100003|this SM is master" "$WORK/C.log" ||
	fail "C neither stands by for B nor decided: $(grep -h 'election' "$WORK/C.log" | tail -4)"
grep -q "this SM is master" "$WORK/C.log" &&
	fail "C made itself master while B, which outranks it, was late to answer: $(grep -h 'election' "$WORK/C.log" | tail -4)"
[ "$(sm_state_of "$(lid_of host-2)")/$(sm_state_of "$(lid_of host-3)")" = 3/2 ] ||
	fail "B/C: $(sm_state_of "$(lid_of host-2)")/$(sm_state_of "$(lid_of host-3)"), want 3/2"
echo "C waited for B (late to answer) instead of making itself master; B master, C standing by"
verify_passes || fail "the subnet is not routed: $("$BUILD/test/fabricsim/fabricsim" verify | tail -2)"
echo PASS
