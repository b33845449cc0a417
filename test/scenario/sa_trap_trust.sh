#!/usr/bin/env bash
# Security traps only to trusted subscribers: a host without the SM_Key that subscribes to
# every trap (0xffff) gets ports going out of service (trap 65) but not the Bad M_Key trap
# (256, which carries the M_Key a rogue presented) that a wrong-key probe from another host
# raises; a subscriber that gave the SM_Key gets both. Before, the subscription check
# refused only a subscription naming 256-259, and 0xffff let them all through. Which
# subscription gave the SM_Key is kept across a restart.
# Usage: sa_trap_trust.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need ibportstate
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
subs() { # how many subscriptions the SA lists to a trusted requester
	SIM_HOST=host-9 "$IBSA" --transport sim --sm-key 1 --json informinfo |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
subs_are() { [ "$(subs)" = "$1" ]; }
traps() { # FILE: the trap numbers received, in order
	python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["trap"]) for l in open(sys.argv[1]) if l.strip()))' "$1"
}
got() { traps "$1" | tr ' ' '\n' | grep -qx "$2"; } # FILE TRAP

start_fabricsim "fattree:radix=8,levels=2"
printf 'm_key: 0x5eed5eed\nm_key_protect: 1\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"

# naming a security trap without the SM_Key is refused, as before
out=$(SIM_HOST=host-1 "$IBSA" --transport sim events --trap 256 --timeout 1 2>&1) &&
	fail "an untrusted subscription to trap 256 was accepted"
grep -q "0x0200" <<<"$out" || fail "an untrusted subscription to 256: not refused with 0x0200: $out"

(SIM_HOST=host-1 exec "$IBSA" --transport sim --json events --trap 0xffff --timeout 120 \
	>"$WORK/untrusted.json" 2>"$WORK/untrusted.err") &
PIDS+=($!)
(SIM_HOST=host-2 exec "$IBSA" --transport sim --sm-key 1 --json events --trap 0xffff --timeout 120 \
	>"$WORK/trusted.json" 2>"$WORK/trusted.err") &
PIDS+=($!)
wait_until 10 subs_are 2 || fail "the two subscriptions are not listed: $(subs)"
echo "host-1 (no SM_Key) and host-2 (SM_Key) subscribed to every trap"

# a rogue on host-5 tries host-6's port with wrong keys: host-6 raises trap 256
h6_lid=$(lid_of host-6)
rogue() {
	on_sim host-5 ibportstate -t 200 -y 0x1 "$h6_lid" 1 disable >/dev/null 2>&1 || true
	got "$WORK/trusted.json" 256
}
wait_until 20 rogue || fail "the trusted subscriber got no trap 256: $(cat "$WORK/trusted.json" "$WORK/trusted.err")"
"$FS" ctl port host-6 1 | has "state ACTIVE" || fail "the rogue disabled host-6's port"
echo "trap 256 reached the trusted subscriber"

# an ordinary trap after it reaches both
"$FS" ctl node remove host-4 >/dev/null
wait_until 20 got "$WORK/untrusted.json" 65 || fail "the untrusted subscriber got no trap 65: $(cat "$WORK/untrusted.json" "$WORK/untrusted.err")"
wait_until 20 got "$WORK/trusted.json" 65 || fail "the trusted subscriber got no trap 65: $(cat "$WORK/trusted.json")"
for t in 256 257 258 259; do
	got "$WORK/untrusted.json" $t && fail "the untrusted subscriber got security trap $t: $(traps "$WORK/untrusted.json")"
done
echo "untrusted: $(traps "$WORK/untrusted.json"); trusted: $(traps "$WORK/trusted.json")"
echo "security traps only to the subscriber with the SM_Key: ok"

# which subscription was trusted survives a restart (the state file; the standby's copy is
# the same lines)
sa_state_written
grep -q "^sub .* trusted$" "$WORK/state/sa-state" || fail "the state file lost the trust: $(grep ^sub "$WORK/state/sa-state")"
stop_pids "$IBSMD_PID"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
n256() { traps "$WORK/trusted.json" | tr ' ' '\n' | grep -cx 256 || true; }
before=$(n256)
rogue_again() {
	on_sim host-5 ibportstate -t 200 -y 0x1 "$h6_lid" 1 disable >/dev/null 2>&1 || true
	[ "$(n256)" -gt "$before" ]
}
wait_until 30 rogue_again || fail "after a restart the trusted subscriber got no trap 256"
"$FS" ctl node add host-4 >/dev/null
wait_until 20 got "$WORK/untrusted.json" 64 || fail "after a restart the untrusted subscriber got no trap 64: $(traps "$WORK/untrusted.json")"
got "$WORK/untrusted.json" 256 && fail "after a restart the untrusted subscriber got trap 256: $(traps "$WORK/untrusted.json")"
echo "after a restart: untrusted: $(traps "$WORK/untrusted.json"); trusted: $(traps "$WORK/trusted.json")"
echo "kept across a restart: ok"
