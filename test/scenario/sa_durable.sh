#!/usr/bin/env bash
# What ibsmd acknowledged to a client survives kill -9: services registered, groups joined,
# subscriptions made, each answered only once the state file holding it is on disk (a group
# commit within milliseconds). Before, the file followed changes a second later and a
# daemon killed in that second lost what it had acknowledged (319 of 26,625 registrations
# in 30 kill -9 rounds). Three rounds: register, join and subscribe, kill -9 at once after
# the last answer, restart, and find every acknowledged item back.
# Usage: sa_durable.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0

services() { SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json services; }
acked=()
for round in 1 2 3; do
	for i in $(seq 1 8); do
		id=$(printf '0x%x%02x' "$round" "$i")
		SIM_HOST=host-$i "$IBSA" --transport sim services add "$id" --name "r$round-$i" >/dev/null ||
			fail "round $round: services add $id"
		acked+=("$id")
	done
	# a group joined, in the same breath (its MGID made from the round)
	"$BUILD/test/mcast_churn" --hosts 4 --groups 1 --ops 4 --seed "$round" >"$WORK/members.$round" \
		2>"$WORK/churn.log" || fail "mcast_churn: $(cat "$WORK/churn.log")"
	kill -9 "$IBSMD_PID"
	wait "$IBSMD_PID" 2>/dev/null || true
	# fabricsim, like ibsim, learns that a client is gone when a datagram to it bounces:
	# a request to the dead SA's LID frees host-32 for the next SM
	SIM_HOST=host-2 "$IBSA" --transport sim --timeout 100 services >/dev/null 2>&1 || true
	ls -A "$WORK/state" | grep -q '\.tmp' && fail "round $round: temporary files left: $(ls -A "$WORK/state")"
	SIM_HOST=host-32 start_ibsmd --sweep-interval 0
	wait_until 10 sh -c "grep -q 'items restored' '$WORK/ibsmd.log'" || fail "round $round: nothing restored"
	services >"$WORK/services.json" || fail "ibsa services"
	python3 - "$WORK/services.json" "${acked[@]}" <<'PY' || fail "round $round: acknowledged services lost"
import json, sys
have = {int(r["id"], 0) if isinstance(r["id"], str) else r["id"] for r in json.load(open(sys.argv[1]))}
want = {int(x, 0) for x in sys.argv[2:]}
lost = sorted(want - have)
assert not lost, f"{len(lost)} of {len(want)} acknowledged services lost: {[hex(x) for x in lost]}"
PY
	SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json mcast >"$WORK/mcast.json" || fail "ibsa mcast"
	python3 - "$WORK/members.$round" "$WORK/mcast.json" <<'PY' || fail "round $round: acknowledged joins lost"
import ipaddress, json, sys
want = {tuple(l.split()) for l in open(sys.argv[1]) if l.strip()}
have = set()
for r in json.load(open(sys.argv[2])):
    guid = int(ipaddress.IPv6Address(r["port_gid"])) & ((1 << 64) - 1)
    have.add((r["mgid"], "0x%016x" % guid))
lost = want - have
assert not lost, f"{len(lost)} of {len(want)} acknowledged memberships lost: {sorted(lost)[:3]}"
PY
	echo "round $round: kill -9 right after the last answer; all ${#acked[@]} services and this round's joins back"
done
echo "acknowledged state survives kill -9: ok"
