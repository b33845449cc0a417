#!/usr/bin/env bash
# SMs that do not know the subnet's SM_Key, and a tenant's forged SMInfo, get nothing:
# 1. a stranger's master (sm_key 0) runs the subnet first: an SM of the subnet does not
#    stand by for it (it would leave the subnet to the stranger) and takes none of its state;
# 2. the subnet's own SMs (A master, B standing by) sync with each other;
# 3. a stranger of priority 15 and sm_key 0 joins: A does not hand the subnet over to it;
# 4. a host sends DISABLE, STANDBY and HANDOVER naming A's and B's GUIDs: nothing changes;
# 5. a host reads A's and B's SMInfo: neither shows it the SM_Key.
# Usage: sm_stranger.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FORGE="$BUILD/test/smi_forge"
start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
KEY="sm_key: 0x1234abcd"
forge() { (cd "$WORK" && SIM_HOST=host-9 "$FORGE" "$@"); }
state() { sm_state_of "$(lid_of "$1")"; }
guid_of() { "$BUILD/test/fabricsim/fabricsim" ctl lids | awk -v h="$1" '$4 == h { print $1 }'; }

# 1. the stranger is master first; A does not stand by for it, nor take its state
start_named_ibsmd S host-4 15 "sm_key: 0" "sweep_interval: 1"
wait_until 60 grep -q "subnet up" "$WORK/S.log" || fail "S did not bring the subnet up"
start_named_ibsmd A host-1 10 "$KEY" "sweep_interval: 1"
wait_until 30 grep -q "has not shown this subnet's SM_Key: not standing by" "$WORK/A.log" ||
	fail "A did not say why it does not follow S: $(grep election "$WORK/A.log" | tail -3)"
wait_until 30 grep -q "this SM is master" "$WORK/A.log" || fail "A did not take the subnet"
grep -q ": standing by\|handed over, standing by" "$WORK/A.log" && fail "A stood by for the stranger: $(grep "standing by:" "$WORK/A.log")"
grep -q "in step with master" "$WORK/A.log" && fail "A took the stranger's state: $(grep 'in step' "$WORK/A.log")"
echo "A does not stand by for the stranger S and takes none of its state"
kill -9 "$PID_S"
wait_until 30 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
verify_passes || fail "not routed once S is gone: $("$BUILD/test/fabricsim/fabricsim" verify | tail -2)"

# 2. B, of the subnet, stands by under A and gets A's state
start_named_ibsmd B host-2 5 "$KEY" "sweep_interval: 1"
wait_until 30 grep -q "standing by" "$WORK/B.log" || fail "B does not stand by"
wait_until 30 grep -q "in step with master" "$WORK/B.log" || fail "B never got in step with A"
echo "B is in step with A (authenticated sync)"

# 3. a stranger of priority 15 joins: no handover to it
start_named_ibsmd S2 host-4 15 "sm_key: 0" "sweep_interval: 1"
wait_until 30 grep -q "has not shown this subnet's SM_Key: not handing" "$WORK/A.log" ||
	fail "A did not say why it keeps the subnet from S2"
# bounded by A's own events: 3 light sweeps, each asking S2 again, after the refusal
ls0=$(status_num A sweeps light)
wait_until 30 status_ge A sweeps light $((ls0 + 3)) ||
	fail "A made no light sweeps (status: $("$BUILD/cli/ibsa" --control "$WORK/control-A" --json status))"
[ "$(state host-1)" = 3 ] || fail "A lost the subnet to the stranger: $(grep election "$WORK/A.log" | tail -3)"
grep -q "HANDOVER" "$WORK/S2.log" && fail "S2 was handed the subnet: $(grep HANDOVER "$WORK/S2.log")"
grep -q "handing over without it\|waits until it holds this master's state" "$WORK/A.log" &&
	fail "A's log speaks of handing over to the stranger: $(grep 'handing over without it\|waits until' "$WORK/A.log" | head -2)"
kill -9 "$PID_S2"
echo "A keeps the subnet from a stranger of higher priority"

# 4. forged Sets from a host, naming the subnet's SMs
GA=$(guid_of host-1) GB=$(guid_of host-2) LA=$(lid_of host-1) LB=$(lid_of host-2)
for args in "$LA 3 $GB 3 0" "$LA 4 $GB 3 0" "$LB 3 $GA 3 0" "$LB 1 $GA 3 0" "$LB 5 $GA 3 0" \
	"$LA 4 $GB 3 0x1234abcd0"; do
	out=$(forge set $args) || fail "no answer to the forged Set $args"
	case $out in "status 0x001c "*) ;; *) fail "forged Set $args: $out, want status 0x001c" ;; esac
done
# the Sets were answered (refused) above; one light sweep of A later, nothing has moved
ls0=$(status_num A sweeps light)
wait_until 30 status_ge A sweeps light $((ls0 + 1)) || fail "A made no light sweep"
[ "$(state host-1)/$(state host-2)" = 3/2 ] ||
	fail "the forged Sets changed A/B: $(state host-1)/$(state host-2), want 3/2"
grep -q "ALARM: SMInfo Set DISABLE" "$WORK/A.log" || fail "A did not report the forged DISABLE"
echo "forged DISABLE, STANDBY, HANDOVER and DISCOVER refused (status 0x001c), A/B unchanged"

# 5. no key for the asking
for l in "$LA" "$LB"; do
	out=$(forge get "$l") || fail "no SMInfo answer from LID $l"
	case $out in *"key 0x0000000000000000 "*) ;; *) fail "LID $l showed a host its SM_Key: $out" ;; esac
done
echo "a host reads SMInfo from A and B: key 0"
verify_passes || fail "the subnet is not routed: $("$BUILD/test/fabricsim/fabricsim" verify | tail -2)"
echo PASS
