#!/usr/bin/env bash
# What clients created survives a restart of ibsmd: services, multicast groups with their
# members and MLIDs, event subscriptions, all read back the same from the new ibsmd; and what
# belonged to a port that left the fabric while ibsmd was down is gone.
# Usage: sa_restart.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0

ask() { # DIR: what the SA holds for clients
	mkdir -p "$1"
	SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json mcast >"$1/mcast.json" || fail "ibsa mcast"
	SIM_HOST=host-2 "$IBSA" --transport sim --json services >"$1/services.json" || fail "ibsa services"
	SIM_HOST=host-2 "$IBSA" --transport sim --json informinfo >"$1/informinfo.json" || fail "ibsa informinfo"
}

"$BUILD/test/mcast_churn" --hosts 12 --groups 5 --ops 60 --seed 3 >"$WORK/members.txt" 2>"$WORK/churn.log" ||
	fail "mcast_churn: $(cat "$WORK/churn.log")"
SIM_HOST=host-1 "$IBSA" --transport sim services add 0x100 --name kept >/dev/null || fail "services add"
SIM_HOST=host-3 "$IBSA" --transport sim services add 0x300 --name "goes with host-3" >/dev/null ||
	fail "services add"
# a subscriber that goes away without unsubscribing: its subscriptions stay
(SIM_HOST=host-4 exec "$IBSA" --transport sim events --count 100 --timeout 600 >/dev/null 2>&1) &
EV=$!
subscribed() { SIM_HOST=host-2 "$IBSA" --transport sim --json informinfo | has qpn; }
wait_until 10 subscribed || fail "ibsa events did not subscribe"
kill -9 "$EV" 2>/dev/null || true
ask "$WORK/before"
sa_state_written
stop_pids "$IBSMD_PID"
# the lines may come in any order (a standby's copy is a set): members before their groups
tac "$WORK/state/sa-state" >"$WORK/sa-state.rev" && mv "$WORK/sa-state.rev" "$WORK/state/sa-state"
[ "$(grep -m1 -o '^member\|^group' "$WORK/state/sa-state")" = member ] || fail "no member before its group"

SIM_HOST=host-32 start_ibsmd --sweep-interval 0
ask "$WORK/after"
python3 - "$WORK/before" "$WORK/after" <<'PY' || fail "the SA's state changed across the restart"
import json, os, sys
for name in ("mcast", "services", "informinfo"):
    a = json.load(open(os.path.join(sys.argv[1], name + ".json")))
    b = json.load(open(os.path.join(sys.argv[2], name + ".json")))
    if name == "services":  # leases count down; the rest stays
        for r in a + b:
            r.pop("lease", None)
    key = lambda r: json.dumps(r, sort_keys=True)
    ka, kb = sorted(map(key, a)), sorted(map(key, b))
    assert ka == kb, f"{name}: only before {[k for k in ka if k not in kb][:2]}, only after {[k for k in kb if k not in ka][:2]}"
    print(f"{name}: {len(a)} records, the same after the restart")
PY
grep -q "items restored" "$WORK/ibsmd.log" || fail "the restore is not logged"
"$FS" verify --json >"$WORK/verify.json" || true
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["multicast"]; sys.exit(0 if m["bad"] == 0 and m["mlids"] > 0 else 1)' \
	"$WORK/verify.json" || fail "MFTs after the restart: $(head -c 300 "$WORK/verify.json")"
echo "groups, members, MLIDs, services and subscriptions restored: ok"

# host-3 leaves the fabric while ibsmd is down: its service and memberships go with it
sa_state_written
stop_pids "$IBSMD_PID"
"$FS" ctl node remove host-3 >/dev/null
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
ask "$WORK/gone"
python3 - "$WORK/gone" <<'PY' || fail "host-3's state survived its leaving"
import json, os, sys
svc = json.load(open(os.path.join(sys.argv[1], "services.json")))
assert [s["name"] for s in svc] == ["kept"], f"services {svc}"
mc = json.load(open(os.path.join(sys.argv[1], "mcast.json")))
assert not any(r["port_gid"] == "fe80::10:5" for r in mc), "host-3 (fe80::10:5) still a member"
PY
echo "a port that left while ibsmd was down: its service and memberships dropped: ok"
