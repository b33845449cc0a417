#!/usr/bin/env bash
# One host must not take the SA's room of all (issue 33): with sa_services_per_port: 3 and
# sa_groups_per_port: 2, host-1 registers three services and creates two multicast groups;
# the next registration (for itself or for another port's GID) and the next creation are
# refused with NO_RESOURCES (0x0100) and a warning naming the port and the setting, while
# host-2 still registers and creates, and host-1 still joins groups that exist. Deleting a
# service, or the group going, makes room for one more. After a restart (the state file),
# and on a standby that takes over (its copy of the master's), the counts are what they
# were, not zero.
# Usage: sa_quotas.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
CHURN="$BUILD/test/mcast_churn"
as() { # HOST ibsa-args...: ibsa from that host
	local h=$1
	shift
	SIM_HOST=$h "$IBSA" --transport sim "$@"
}
H2=fe80::10:3 # host-2's port GID (its port GUID 0x100003)
svc_ok() { # HOST ID [ibsa-args...]
	local h=$1 id=$2
	shift 2
	as "$h" services add "$id" --name "q$id" "$@" >/dev/null || fail "$h could not register $id"
}
svc_full() { # HOST ID [ibsa-args...]: refused with 0x0100
	local h=$1 id=$2 out
	shift 2
	out=$(as "$h" services add "$id" --name "q$id" "$@" 2>&1) && fail "$h registered $id beyond its quota: $out"
	grep -q "0x0100" <<<"$out" || fail "$h registering $id: not refused with 0x0100: $out"
}
group() { # HOST GROUP join|leave WANT-STATUS
	local st
	st=$("$CHURN" --step "${1#host-}" "$2" "$3") || fail "mcast_churn --step $*"
	[ "$st" = "$4" ] || fail "$1 $3 group $2: status $st, want $4"
}

start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
printf 'sm_priority: 10\nsa_services_per_port: 3\nsa_groups_per_port: 2\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml"

# services
svc_ok host-1 0x6000
svc_ok host-1 0x6001
svc_ok host-1 0x6002
svc_full host-1 0x6003
svc_full host-1 0x6003 --gid $H2 # for another port: still the asker's room
svc_ok host-1 0x6001 --name renewed # a renewal takes no new room
svc_ok host-2 0x6100
grep -q "0x0000000000100001) has registered 3 services.*sa_services_per_port" "$WORK/ibsmd.log" ||
	fail "no warning naming host-1's port and the setting: $(grep -i services "$WORK/ibsmd.log" | tail -3)"
as host-1 services delete 0x6001 >/dev/null || fail "host-1 deleting 0x6001"
svc_ok host-1 0x6003
svc_full host-1 0x6004
echo "services: 3 for host-1, then 0x0100; host-2 not held back; a deletion frees one: ok"

# groups (full joins; the first creates)
group host-1 1 join 0x0000
group host-1 2 join 0x0000
group host-1 3 join 0x0100
group host-2 3 join 0x0000
group host-1 3 join 0x0000 # joining what exists is not limited
group host-1 1 leave 0x0000 # its last full member: the group goes
group host-1 4 join 0x0000
group host-1 5 join 0x0100
grep -q "0x0000000000100001) has created 2 multicast groups.*sa_groups_per_port" "$WORK/ibsmd.log" ||
	fail "no warning naming host-1's port and sa_groups_per_port"
echo "groups: 2 created by host-1, then 0x0100; joins and host-2 not held back; a group gone frees one: ok"

# the counts come back with the records
sa_state_written
grep -q "^service .* 0x0000000000100001$" "$WORK/state/sa-state" ||
	fail "the state file does not name the registrant: $(grep ^service "$WORK/state/sa-state")"
stop_pids "$IBSMD_PID"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml"
wait_until 20 sh -c "SIM_HOST=host-2 '$IBSA' --transport sim --json services 0x6003 | grep -q q0x6003" ||
	fail "the services did not come back"
svc_full host-1 0x6004
svc_ok host-2 0x6101
group host-1 5 join 0x0100
group host-2 5 join 0x0000
as host-1 services delete 0x6000 >/dev/null || fail "host-1 deleting 0x6000 after the restart"
svc_ok host-1 0x6004
group host-1 4 leave 0x0000
group host-1 6 join 0x0000
echo "after a restart: host-1 still at its quotas, room again as before: ok"

# a standby that takes over counts from its copy of the master's lines
start_named_ibsmd B host-30 5 "sweep_interval: 2" "sa_services_per_port: 3" "sa_groups_per_port: 2"
wait_until 30 grep -q "in step with master" "$WORK/B.log" || fail "the standby never got in step"
stop_pids "$IBSMD_PID"
wait_until 30 grep -q "subnet up" "$WORK/B.log" || fail "the standby did not take over"
wait_until 20 sh -c "SIM_HOST=host-2 '$IBSA' --transport sim --json services 0x6004 | grep -q q0x6004" ||
	fail "the services did not come to the standby"
svc_full host-1 0x6005
group host-1 7 join 0x0100
svc_ok host-2 0x6102
echo "on the standby that took over: host-1 still at its quotas: ok"
