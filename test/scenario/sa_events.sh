#!/usr/bin/env bash
# Event subscriptions as a client uses them: `ibsa events` subscribes to traps 64/65 and gets
# a Report when a node leaves and one when it comes back, naming its GID; InformInfoRecords
# list the subscriptions while they last; unsubscribing removes them, and so does the
# subscriber's port leaving the fabric.
# Usage: sa_events.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
subs() { # how many subscriptions the SA lists
	SIM_HOST=host-2 "$IBSA" --transport sim --json informinfo |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
subs_are() { [ "$(subs)" = "$1" ]; }

start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 # changes reach the SM by traps only

(SIM_HOST=host-1 exec "$IBSA" --transport sim --json events --count 2 --timeout 60 \
	>"$WORK/events.json" 2>"$WORK/events.err") &
EV=$!
PIDS+=($EV)
wait_until 10 subs_are 2 || fail "the two subscriptions are not listed: $(subs)"
echo "subscribed, listed as InformInfoRecords: ok"

"$FS" ctl node remove host-4 >/dev/null
wait_until 20 grep -q '"trap":65' "$WORK/events.json" || fail "no Report of trap 65: $(cat "$WORK/events.json" "$WORK/events.err")"
"$FS" ctl node add host-4 >/dev/null
wait "$EV" || fail "ibsa events did not get both Reports: $(cat "$WORK/events.json" "$WORK/events.err")"
python3 - "$WORK/events.json" <<'PY' || fail "Reports"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [e["trap"] for e in ev] == [65, 64], f"traps {ev}"
assert all(e["gid"] == "fe80::10:7" for e in ev), f"GIDs {ev} (host-4 is fe80::10:7)"
PY
echo "host-4 out of service (65) and back (64), by its GID: ok"
[ "$(subs)" = 0 ] || fail "ibsa events left its subscriptions behind"
echo "unsubscribed on exit: ok"

(SIM_HOST=host-5 exec "$IBSA" --transport sim events --timeout 60 >/dev/null 2>&1) &
PIDS+=($!)
wait_until 10 subs_are 2 || fail "host-5's subscriptions are not listed"
"$FS" ctl node remove host-5 >/dev/null
wait_until 20 subs_are 0 || fail "the subscriptions of a port that left remain: $(subs)"
echo "a subscriber that leaves takes its subscriptions: ok"

# switch traps are forwarded: a link going down at a switch reaches a trap 128 subscriber,
# and multicast groups being created and deleted reach 66/67 subscribers
(SIM_HOST=host-6 exec "$IBSA" --transport sim --json events --trap 128 --trap 66 --trap 67 \
	--count 3 --timeout 60 >"$WORK/traps.json" 2>"$WORK/traps.err") &
EV=$!
PIDS+=($EV)
wait_until 10 subs_are 3 || fail "the trap 128/66/67 subscriptions are not listed: $(subs)"
"$BUILD/test/mcast_churn" --hosts 2 --groups 1 --ops 1 >"$WORK/m.txt" 2>/dev/null || fail "join"
"$BUILD/test/mcast_churn" --hosts 2 --groups 1 --ops 0 --members "$WORK/m.txt" --leave-all >/dev/null 2>&1 ||
	fail "leave"
"$FS" ctl link down leaf-1 8 >/dev/null
wait "$EV" || fail "ibsa events did not get traps 66, 67 and 128: $(cat "$WORK/traps.json" "$WORK/traps.err")"
python3 - "$WORK/traps.json" <<'PY' || fail "forwarded traps"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# both ends of the link are switches: each reports it
assert {e["trap"] for e in ev} == {66, 67, 128}, f"traps {ev}"
PY
echo "trap 128 from a switch forwarded, 66/67 for a group created and deleted: ok"
