#!/usr/bin/env bash
# A second standby that asks the new master for the sync while that master's first sweep
# still runs. A (priority 10) is master, B (5) and C (1) stand by, both in step. kill -9 A:
# B takes over and, its SMAs answering slowly (fabricsim's SMA service time), spends seconds
# in its first sweep; C stands by for B at once and asks B's SA for the ibsmd.sync
# ServiceRecord inside that sweep, where B answers BUSY (client state is restored when the
# first sweep ends). BUSY is "ask again later": C must keep asking, get in step with B, and
# follow B's later changes. The test fails if C's question did not land inside B's sweep (the
# order of events it exists for), so it cannot pass by luck.
# Usage: sm_sync_takeover.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=16,levels=2" --max-clients 40
items() { grep -hv '^#' "$WORK/state-$1/guid2lid" "$WORK/state-$1/sa-state" 2>/dev/null | sort; }
in_step() { [ -s "$WORK/state-$1/sa-state" ] && [ "$(items "$1")" = "$(items "$2")" ]; }

start_named_ibsmd A host-1 10 "sweep_interval: 2" "mad_timeout_ms: 1000"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
# B keeps 16 SMPs in flight: its first sweep then lasts, and leaves the SMAs (each serves one
# MAD at a time) to C's discovery too; at fabricsim's window of 256 B's Sets queued at every
# SMA ahead of C's reads, C found B only as B's sweep ended, and asked after it (CI, once)
start_named_ibsmd B host-2 5 "sweep_interval: 2" "mad_timeout_ms: 1000" "mad_window: 16"
start_named_ibsmd C host-3 1 "sweep_interval: 2" "mad_timeout_ms: 1000"
SIM_HOST=host-5 "$IBSA" --transport sim services add 0x101 --name before-kill --lease 3600 \
	>/dev/null || fail "services add"
a_has_it() { grep -q '^service' "$WORK/state-A/sa-state"; }
wait_until 10 a_has_it || fail "A's state file lacks the service"
wait_until 30 in_step B A || fail "B's copy is not A's: $(diff <(items A) <(items B) | head -5)"
wait_until 30 in_step C A || fail "C's copy is not A's: $(diff <(items A) <(items C) | head -5)"
echo "B and C hold A's $(items A | wc -l) items"

# every SMA answer now takes 40 ms: B's takeover sweep (it reads every switch's ports and
# tables) lasts seconds, while C's SA question to B is one MAD. The SMs wait 1 s for an
# answer, so that a node's queue of SMPs at 40 ms each is slow, not lost.
"$FS" ctl latency 0 40000 >/dev/null
kill -9 "$PID_A"
wait_until 30 grep -q "taking over with the last master" "$WORK/B.log" || fail "B did not take over"
wait_until 60 grep -q "subnet up" "$WORK/B.log" || fail "B did not bring the subnet up"
"$FS" ctl latency 0 0 >/dev/null
# the order of events this test is for: C's question answered BUSY inside B's first sweep
grep -qi "answered the ibsmd.sync query with busy" "$WORK/C.log" ||
	grep -q "shows no ibsmd.sync service in its SA (busy)" "$WORK/C.log" ||
	fail "C's question did not land inside B's first sweep: the test did not reproduce the order of events"
echo "C asked B during B's first sweep and was answered BUSY"

# C keeps asking and gets in step with B; then it follows B's changes
# (the copies are equal already: B's state is A's; what shows C asked is its log)
wait_until 30 grep -q "in step with master SM GUID 0x0000000000100003" "$WORK/C.log" ||
	fail "C never got in step with B"
wait_until 30 in_step C B || fail "C's copy is not B's: $(diff <(items B) <(items C) | head -5)"
SIM_HOST=host-6 "$IBSA" --transport sim services add 0x102 --name after-kill --lease 3600 \
	>/dev/null || fail "services add on B"
b_has_it() { grep -q "$(printf after-kill | od -An -tx1 | tr -d ' \n')" "$WORK/state-B/sa-state"; }
wait_until 10 b_has_it || fail "B's state file lacks the new service"
wait_until 30 in_step C B || fail "C did not follow B's change: $(diff <(items B) <(items C) | head -5)"
echo "C got in step with B after the BUSY answers and follows B's changes: $(items B | wc -l) items"
verify_passes || fail "the subnet is not routed: $("$FS" verify | tail -2)"
echo PASS
