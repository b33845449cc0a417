#!/usr/bin/env bash
# The link settings a site holds a bad cable with (OpenSM's force_link_width/_speed):
# link_width_enabled reaches the switch ports, read back with smpquery; the link facing
# host-1 trains to it when its cable is reseated; a reload back to every width sets the
# ports again at once, without a sweep.
# Usage: sm_link_settings.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=4,levels=2"
start_named_ibsmd A host-8 10 "sweep_interval: 0" "link_width_enabled: 1"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "ibsmd did not bring the subnet up"

# the leaf port facing host-1, from the simulator's cabling
read -r leaf lport < <("$FS" ctl port host-1 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
[ -n "$lport" ] || fail "host-1's leaf not found: $("$FS" ctl port host-1 1)"
# field NAME of that port's PortInfo as smpquery shows it ("Name:....value")
field() { on_sim host-6 smpquery portinfo "$(lid_of "$leaf")" "$lport" 2>/dev/null |
	sed -n "s/^$1:\.*//p"; }
wait_until 10 eval '[ "$(field LinkWidthEnabled)" = 1X ]' ||
	fail "LinkWidthEnabled on $leaf/$lport: $(field LinkWidthEnabled), not 1X"
[ "$(field LinkWidthActive)" = 4X ] || fail "the link retrained unasked: $(field LinkWidthActive)"
echo "link_width_enabled 1 read back on $leaf/$lport (1X), the running link untouched (4X): ok"

# the cable reseated: the link trains to what its ends enable
"$FS" ctl link down "$leaf" "$lport" >/dev/null
"$FS" ctl link up "$leaf" "$lport" >/dev/null
active() { "$FS" ctl port host-1 1 | grep -q "^state ACTIVE"; }
wait_until 30 active || fail "host-1's link did not come back ACTIVE: $("$FS" ctl port host-1 1)"
[ "$(field LinkWidthActive)" = 1X ] || fail "reseated, the link runs $(field LinkWidthActive), not 1X"
echo "reseated: the link trains at 1X: ok"

# back to every width by a reload: set on the ports at once, no sweep (the sweeps ended
# and under way, from the status; the link's return above may still be in one)
sweeps() { "$IBSA" --control "$WORK/control-A" --json status |
	python3 -c 'import json,sys; s=json.load(sys.stdin)["sweeps"]; print(-1 if s["sweeping"] else s["count"])'; }
wait_until 30 eval '[ "$(sweeps)" -ge 0 ]' || fail "a sweep does not end"
sweeps=$(sweeps)
reloads=$(log_count "reload of" "$WORK/A.log")
sed -i 's/^link_width_enabled: .*/link_width_enabled: 255/' "$WORK/A.yaml"
kill -HUP "$PID_A"
log_more 10 "reload of" "$reloads" "$WORK/A.log" || fail "no reload logged"
grep "reload of" "$WORK/A.log" | tail -n 1 | grep -q "link_width_enabled changed; set on the ports now" ||
	fail "the reload says: $(grep "reload of" "$WORK/A.log" | tail -n 1)"
wait_until 10 eval '[ "$(field LinkWidthEnabled)" = "$(field LinkWidthSupported)" ]' ||
	fail "LinkWidthEnabled after the reload: $(field LinkWidthEnabled), supported $(field LinkWidthSupported)"
now=$(sweeps)
[ "$now" = "$sweeps" ] || fail "the reload swept ($sweeps sweeps before, $now after)"
echo "reload to 255: every width enabled again, with no sweep: ok"
echo "PASS"
