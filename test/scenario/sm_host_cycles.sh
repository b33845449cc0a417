#!/usr/bin/env bash
# A host that power-cycles faster than the SM looks (no trap reaches it; the light sweep finds
# its switch's PortStateChange): each cycle is one flap of one link, counted once, at the
# switch's end. When the cycles reach link_flap_threshold the link is disabled at the switch's
# port (the end the SM reaches without crossing it): the host's own port, disabled, could not
# be reached again to enable it, and `ibsa release` would enable nothing. It did: the host's
# PortInfo read ACTIVE before and INIT now counted the cycle a second time, and a quarantine
# set off by that count disabled the host's port; the soak lost a host for good that way.
# Usage: sm_host_cycles.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2" # 4 spines, 8 leaves, 32 hosts
printf 'link_flap_threshold: 4\nlink_flap_window: 600\nlink_flap_hold: 600\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --sweep-interval 1 --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"
read -r leaf lport < <("$FS" ctl port host-5 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
[ -n "$leaf" ] || fail "host-5 has no peer: $("$FS" ctl port host-5 1)"
"$FS" ctl traps off >/dev/null
state() { "$FS" ctl port "$1" "$2" | sed -n 's/.*state \([A-Z]*\) .*/\1/p'; }
active() { [ "$(state host-5 1)" = ACTIVE ] && [ "$(state "$leaf" "$lport")" = ACTIVE ]; }
cycle() { # host-5 off and on again between two light sweeps: only its switch's PSC tells
	"$FS" ctl node remove host-5 >/dev/null
	"$FS" ctl node add host-5 >/dev/null
}
quarantines() { log_count 'event=link_quarantined'; }

cycle # one flap: two transitions of the four
wait_until 10 active || fail "host-5 not ACTIVE again after a power cycle: $(state host-5 1) / $(state "$leaf" "$lport")"
light_sweeps_pass 2
[ "$(quarantines)" = 0 ] ||
	fail "one power cycle counted as more than one flap: $(grep link_quarantined "$WORK/ibsmd.log" | cut -c1-200)"
echo "one power cycle between two looks: ACTIVE again, counted once"

cycle # the second: four transitions, the threshold
wait_until 10 sh -c '[ "$(grep -c event=link_quarantined "$1")" -ge 1 ]' _ "$WORK/ibsmd.log" ||
	fail "two power cycles (4 transitions, threshold 4) and no quarantine"
line=$(grep 'event=link_quarantined' "$WORK/ibsmd.log")
[ "$(quarantines)" = 1 ] || fail "$(quarantines) quarantine events, want one"
grep -qE "link \"$leaf\" \(GUID 0x[0-9a-f]+\) port $lport - " <<<"$line" ||
	fail "not disabled at the switch's end ($leaf port $lport): $line"
wait_until 5 sh -c '"$1" ctl journal | awk -v n="$2" -v p="$3" '"'"'$3 == "phys" && $4 == n && $5 == p && $6 == "disabled" { f = 1 } END { exit !f }'"'" _ "$FS" "$leaf" "$lport" ||
	fail "$leaf port $lport was not disabled: $("$FS" ctl port "$leaf" "$lport")"
if "$FS" ctl journal | awk '$3 == "phys" && $4 == "host-5" && $6 == "disabled" { f = 1 } END { exit !f }'; then
	fail "host-5's own port was disabled: nothing could reach it to enable it again"
fi
echo "two power cycles: the link held at $leaf port $lport, host-5's port left alone"

out=$("$IBSA" --control "$WORK/control" release) || fail "ibsa release: $out"
[ "$out" = "1 link(s) enabled again" ] || fail "ibsa release said: $out"
wait_until 10 active || fail "host-5 not ACTIVE after ibsa release: $(state host-5 1) / $(state "$leaf" "$lport")"
wait_until 10 verify_passes || fail "not whole after ibsa release: $("$FS" verify | tail -3)"
echo "ibsa release: host-5 ACTIVE again"
echo "sm_host_cycles: ok"
