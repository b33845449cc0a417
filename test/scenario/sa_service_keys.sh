#!/usr/bin/env bash
# A service belongs to whoever holds its ServiceKey (IBA 15.2.5.14): host-1 registers one
# with a key; host-5, without the SM_Key, can neither register it again (and so take it
# over) nor delete it, without the key or with a wrong one: refused with status 0x0700, the
# record as it was (owner, data, lease). With the key, from host-1 itself, or with the
# SM_Key it works. The key survives a restart (the state file; the standby's copy is the
# same lines), and nobody reads it back.
# Usage: sa_service_keys.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
as() { # HOST ibsa-args...: ibsa from that host
	local h=$1
	shift
	SIM_HOST=$h "$IBSA" --transport sim "$@"
}
H1=fe80::10:1 # host-1's port GID (its port GUID 0x100001)
KEY=0x5ec2e7000000000000000000000000ab
record() { # ID: the service as host-2 sees it, the lease rounded to tens of seconds
	as host-2 --json services "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert len(r) == 1, r
r = r[0]
r["lease"] = (int(r["lease"]) + 9) // 10
print(json.dumps(r, sort_keys=True))'
}
refused() { # WHAT HOST ibsa-args...: the SA must refuse with 0x0700
	local what=$1 out
	shift
	out=$(as "$@" 2>&1) && fail "$what was accepted: $out"
	grep -q "0x0700" <<<"$out" || fail "$what: not refused with 0x0700: $out"
}

start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
echo "sm_priority: 10" >"$WORK/ibsmd.yaml" # above the standby's, below nothing
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml"

as host-1 services add 0x5000 --name "owned" --lease 600 --key "$KEY" >/dev/null ||
	fail "host-1 registers with a key"
before=$(record 0x5000) || fail "the service is not listed"
grep -q '"name": "owned"' <<<"$before" || fail "unexpected record: $before"

refused "host-5 registering host-1's service without the key" \
	host-5 services add 0x5000 --gid $H1 --name "stolen" --lease 600
refused "host-5 registering host-1's service with a wrong key" \
	host-5 services add 0x5000 --gid $H1 --name "stolen" --lease 600 --key 0x5ec2e7
refused "host-5 deleting host-1's service without the key" host-5 services delete 0x5000 --gid $H1
refused "host-5 deleting host-1's service with a wrong key" \
	host-5 services delete 0x5000 --gid $H1 --key 0xbad
[ "$(record 0x5000)" = "$before" ] || fail "the refused requests changed the record: $before -> $(record 0x5000)"
echo "without the key or with a wrong one: refused with 0x0700, the record unchanged: ok"

# the key is never read back
for h in host-1 host-5; do
	as $h --json services 0x5000 | grep -qi 5ec2e7 && fail "the key was shown to $h: $(as $h --json services 0x5000)"
done
echo "the key is not shown: ok"

# the state file keeps it (the standby sync sends the same lines): after a restart a wrong key
# is still refused and the right one works
sa_state_written
grep -q "^service .*5ec2e7" "$WORK/state/sa-state" || fail "the state file lost the key: $(grep ^service "$WORK/state/sa-state")"
[ "$(stat -c %a "$WORK/state/sa-state")" = 600 ] || fail "the state file, keys and all, is mode $(stat -c %a "$WORK/state/sa-state")"
stop_pids "$IBSMD_PID"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml"
wait_until 20 record 0x5000 >/dev/null || fail "the service did not come back"
refused "after a restart, host-5 deleting host-1's service without the key" \
	host-5 services delete 0x5000 --gid $H1
start_named_ibsmd B host-2 5 "sweep_interval: 2"
wait_until 30 grep -q "in step with master" "$WORK/B.log" || fail "the standby never got in step"
wait_until 10 grep -q "^service .*5ec2e7" "$WORK/state-B/sa-state" ||
	fail "the standby's copy lost the key: $(grep ^service "$WORK/state-B/sa-state")"
echo "the key survives a restart and reaches the standby: ok"

as host-5 services add 0x5000 --gid $H1 --name "handed over" --lease 600 --key "$KEY" >/dev/null ||
	fail "host-5 with the key could not register host-1's service again"
record 0x5000 | has '"name": "handed over"' || fail "the registration with the key did not take: $(record 0x5000)"
as host-5 services delete 0x5000 --gid $H1 --key "$KEY" >/dev/null ||
	fail "host-5 with the key could not delete it"
[ "$(as host-2 --json services 0x5000)" = "[]" ] || fail "deleted with the key, still there"
echo "with the key: registered again and deleted: ok"

# its own port needs no key, nor does a trusted requester
as host-1 services add 0x5001 --name "mine" --key 0x1 >/dev/null || fail "host-1 registers 0x5001"
as host-1 services add 0x5001 --name "mine, renewed" >/dev/null || fail "host-1 renewing its own without the key"
as host-1 services delete 0x5001 >/dev/null || fail "host-1 deleting its own without the key"
as host-1 services add 0x5002 --name "for the admin" --key 0x2 >/dev/null || fail "host-1 registers 0x5002"
refused "host-5 deleting a keyed service" host-5 services delete 0x5002 --gid $H1
as host-5 --sm-key 1 services delete 0x5002 --gid $H1 >/dev/null || fail "a trusted requester could not delete it"
[ "$(as host-2 --json services)" = "[]" ] || fail "services left: $(as host-2 --json services)"
echo "from the owner's port or with the SM_Key: no key needed: ok"

# a service registered without a key is not anyone's for the asking either
as host-1 services add 0x5003 --name "no key" >/dev/null || fail "host-1 registers 0x5003"
refused "host-5 deleting a service registered without a key" host-5 services delete 0x5003 --gid $H1
refused "host-5 registering over a service registered without a key" \
	host-5 services add 0x5003 --gid $H1 --name "taken"
echo "a service without a key: only its port or a trusted requester: ok"
