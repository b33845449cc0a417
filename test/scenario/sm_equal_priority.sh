#!/usr/bin/env bash
# Two SMs of the same priority: the one that is master keeps the subnet (IBA 14.4: a master
# hands over only to a standby of higher priority), and the standby, though its lower port
# GUID would win a fresh election, leaves it alone: no handover, and no trap 144 to make
# the master sweep (a standby reminds only a master of lower priority that keeps the subnet).
# Usage: sm_equal_priority.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=8,levels=2"
# A on host-2 comes first and is master; B on host-1 (the lower GUID) comes later
start_named_ibsmd A host-2 5 "sweep_interval: 1"
wait_until 30 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-1 5 "sweep_interval: 1"
wait_until 30 grep -q "standing by: SM GUID .* is master" "$WORK/B.log" ||
	fail "B does not stand by: $(grep election "$WORK/B.log" | tail -3)"
# twenty of B's polls answered by A: each one could have reminded it
m0=$(status_num B mads completed)
wait_until 30 status_ge B mads completed $((m0 + 20)) || fail "B's polls go unanswered"
grep -q "telling it of this SM" "$WORK/B.log" &&
	fail "B, of the same priority, sent A trap 144: $(grep 'telling it' "$WORK/B.log" | head -1)"
grep -q "HANDOVER" "$WORK/A.log" "$WORK/B.log" && fail "a handover between SMs of the same priority"
[ "$(status_field 's["state"]' "$WORK/control-A")" = MASTER ] || fail "A is not master"
echo "same priority: A stays master, B stands by and reminds it of nothing"
echo PASS
