#!/usr/bin/env bash
# The standby sync on its own, on a small fat tree: a standby gets one full copy, then only
# changes however many there are; a standby that restarts, and every standby of a master that
# restarted, get a full copy again; the copies always end equal to the master's state files;
# a standby configured differently (another partition) is reported by both sides; a standby
# under an SM that does not sync (a restarted ibsmd with nothing yet) keeps its own state.
# Usage: sm_standby_sync.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
items() { grep -hv '^#' "$WORK/state-$1/guid2lid" "$WORK/state-$1/sa-state" 2>/dev/null | sort; }
in_step() { [ -s "$WORK/state-$1/sa-state" ] && [ "$(items "$1")" = "$(items "$2")" ]; }
fulls() { grep -c "full copy to standby SM GUID $2" "$WORK/$1.log" || true; }

start_named_ibsmd A host-1 10 "sweep_interval: 2"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-2 5 "sweep_interval: 2"
wait_until 30 grep -q "in step with master" "$WORK/B.log" || fail "B never got in step"
GUID_B=0x0000000000100003

# 1. many changes: groups churn, services come and go; B follows by changes only
d0=$(status_num B sync got_delta)
for round in 1 2 3; do
	"$BUILD/test/mcast_churn" --hosts 16 --groups 6 --ops 80 --seed "$round" \
		>"$WORK/members.$round" 2>"$WORK/churn.log" || fail "mcast_churn: $(cat "$WORK/churn.log")"
	SIM_HOST=host-5 "$IBSA" --transport sim services add "0x10$round" --name "svc-$round" \
		--lease 3600 >/dev/null || fail "services add"
	# B takes this round's changes as a delta before the next round starts
	wait_until 20 status_ge B sync got_delta $((d0 + 1)) ||
		fail "B got no delta for round $round"
	d0=$(status_num B sync got_delta)
done
SIM_HOST=host-5 "$IBSA" --transport sim services delete 0x102 >/dev/null || fail "services delete"
SIM_HOST=host-7 "$IBSA" --transport sim alias add "$(lid_of host-7)" 3 >/dev/null || fail "alias add"
has_alias() { grep -q '^alias' "$WORK/state-A/sa-state"; }
wait_until 10 has_alias || fail "A's state file did not get the alias"
wait_until 30 in_step B A || fail "B's copy is not A's: $(diff <(items A) <(items B) | head -5)"
n=$(items A | wc -l)
[ "$(fulls A $GUID_B)" = 1 ] || fail "A sent B $(fulls A $GUID_B) full copies, want 1 and changes after"
grep -q "^service" <(items B) && grep -q "^alias" <(items B) && grep -q "^member" <(items B) ||
	fail "B's copy lacks services, aliases or members"
echo "B follows A by changes after one full copy: $n items (LIDs, groups, members, services, alias)"

# 1b. B stops answering (SIGSTOP) long enough for A to forget it, while clients change
# things; once it runs again A learns it from its polls and B catches up by changes
kill -STOP "$PID_B"
"$BUILD/test/mcast_churn" --hosts 16 --groups 6 --ops 40 --seed 9 >/dev/null 2>"$WORK/churn.log" ||
	fail "mcast_churn: $(cat "$WORK/churn.log")"
SIM_HOST=host-5 "$IBSA" --transport sim services add 0x104 --name "while-stopped" --lease 3600 \
	>/dev/null || fail "services add"
wait_until 20 grep -q "SM GUID $GUID_B does not answer SMInfo any more" "$WORK/A.log" ||
	fail "A never noticed B stopped"
kill -CONT "$PID_B"
has_stopped_svc() { grep -q "$(printf while-stopped | od -An -tx1 | tr -d ' \n')" "$WORK/state-A/sa-state"; }
wait_until 10 has_stopped_svc || fail "A's state file did not get the service"
wait_until 30 in_step B A || fail "B did not catch up after SIGCONT: $(diff <(items A) <(items B) | head -5)"
[ "$(fulls A $GUID_B)" = 1 ] || fail "B caught up by $(($(fulls A $GUID_B) - 1)) more full copies, not changes"
echo "a standby stopped long enough to be forgotten is learned again and catches up by changes"

# 2. B restarts: it asks again with nothing, and gets a full copy
stop_pids "$PID_B"
start_named_ibsmd B host-2 5 "sweep_interval: 2"
wait_until 30 bash -c "[ \$(grep -c 'full copy to standby SM GUID $GUID_B' '$WORK/A.log') -ge 2 ]" ||
	fail "B restarted and got no full copy"
wait_until 30 in_step B A || fail "B's copy after its restart is not A's"
echo "a restarted standby gets a full copy: ok"

# 3. a standby configured differently is reported, on both sides
start_named_ibsmd C host-3 1 "sweep_interval: 2" "partitions:" "  - name: extra" \
	"    pkey: 0x8009" "    members: all"
wait_until 30 grep -q "configured differently (partitions)" "$WORK/A.log" ||
	fail "A did not report C's partitions"
wait_until 30 grep -q "configured differently (partitions)" "$WORK/C.log" ||
	fail "C did not report that its partitions differ from the master's"
wait_until 30 in_step C A || fail "C's copy is not A's"
echo "C's other partitions reported by A and by C; C still holds A's items"
# ibsa health on the master names each standby's agreement: B alike, C not (both ask it
# every poll; one flag for all once said whichever asked last)
GUID_C=0x0000000000100005
health_sm() { { "$IBSA" --control "$WORK/control-A" --json health 2>/dev/null || true; } |
	python3 -c 'import json,sys; c = {x["name"]: x for x in json.load(sys.stdin)["checks"]}["sm"]; print(c["status"], c["summary"], "|", *c["items"])'; }
two_standbys() { health_sm | grep -q "2 standbys (1 configured alike)"; }
wait_until 20 two_standbys || fail "A's health does not see B and C: $(health_sm)"
for _ in 1 2 3 4 5 6; do
	h=$(health_sm)
	case "$h" in
	"warn "*"2 standbys (1 configured alike) | standby SM $GUID_C (LID "*") is configured differently (partitions)"*) ;;
	*) fail "A's health on its standbys: $h" ;;
	esac
	grep -q "standby SM $GUID_B" <<<"$h" && fail "B is named as differing: $h"
	sleep 0.5
done
echo "ibsa health on the master: 2 standbys, C named as configured differently (partitions), B not"
stop_pids "$PID_C"
# C gone: after three of its polls, A's health no longer counts it
one_standby() { health_sm | grep -q "^ok .*1 standby (1 configured alike)"; }
wait_until 20 one_standby || fail "A's health after C stopped: $(health_sm)"

# 4. A restarts (a new master instance): B takes over with its copy; A comes back as
# standby, gets B's state, and B's SA never went back in time
SIM_HOST=host-9 "$IBSA" --transport sim services add 0x200 --name "last-change" --lease 3600 \
	>/dev/null || fail "services add"
has_last() { grep -q "$(printf last-change | od -An -tx1 | tr -d ' \n')" "$WORK/state-A/sa-state"; }
wait_until 10 has_last || fail "A's state file did not get the last service"
wait_until 30 in_step B A || fail "B missed A's last change"
stop_pids "$PID_A"
wait_until 30 bash -c "grep -q 'taking over with the last master' '$WORK/B.log'" ||
	fail "B did not take over with its copy"
wait_until 60 bash -c "[ \$(grep -c 'subnet up' '$WORK/B.log') -ge 1 ]" || fail "B did not bring the subnet up"
svc() { SIM_HOST=host-9 "$IBSA" --transport sim --json services | python3 -c \
	'import json,sys; print(" ".join(sorted(s["name"] for s in json.load(sys.stdin))))'; }
want="last-change svc-1 svc-3 while-stopped"
svc_is_want() { [ "$(svc)" = "$want" ]; }
wait_until 20 svc_is_want || fail "B's services: '$(svc)', want '$want'"
start_named_ibsmd A host-1 4 "sweep_interval: 2"
wait_until 30 grep -q "full copy to standby SM GUID 0x0000000000100001" "$WORK/B.log" ||
	fail "A came back and got no full copy from B"
wait_until 30 in_step A B || fail "A's copy is not B's"
echo "B took over from its copy (services: $want); A came back and holds B's: ok"
verify_passes || fail "the subnet is not routed: $("$BUILD/test/fabricsim/fabricsim" verify | tail -2)"
echo PASS
