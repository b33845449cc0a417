#!/usr/bin/env bash
# Link health: a cable that flaps costs every port a sweep and moved routes at each
# transition. After link_flap_threshold transitions within link_flap_window, ibsmd disables
# the link at the SM's end, says so once with the count, leaves the rest of the fabric alone
# while the cable goes on flapping (no table anywhere rewritten), enables it again after
# link_flap_hold, and at once on `ibsa release`.
# Usage: sm_link_health.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2" # 4 spines, 8 leaves, 32 hosts
printf 'link_flap_threshold: 6\nlink_flap_window: 60\nlink_flap_hold: 4\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"
read -r spine sport < <("$FS" ctl port leaf-1 5 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
phys() { "$FS" ctl port "$1" "$2" | sed -n 's/.* phys \([0-9]*\) .*/\1/p'; }
disabled() { [ "$(phys leaf-1 5)" = 3 ] || [ "$(phys "$spine" "$sport")" = 3 ]; }
flap() { # N: the cable at leaf-1 port 5 goes down and up N times, each seen by the SM
	for _ in $(seq 1 "$1"); do
		"$FS" ctl link down leaf-1 5 >/dev/null
		sleep 0.25
		"$FS" ctl link up leaf-1 5 >/dev/null
		sleep 0.25
	done
}

flap 4 # 8 transitions: the threshold is 6
wait_until 5 disabled || fail "the link was not disabled after 8 transitions: phys $(phys leaf-1 5) / $(phys "$spine" "$sport")"
n=$(grep -c "event=link_quarantined" "$WORK/ibsmd.log" || true)
[ "$n" = 1 ] || fail "$n quarantine events, want one"
grep "event=link_quarantined" "$WORK/ibsmd.log" | has "went up or down 6 times" ||
	fail "the event does not say how often: $(grep link_quarantined "$WORK/ibsmd.log")"
wait_until 10 verify_passes || fail "routes do not avoid the quarantined link: $("$FS" verify | tail -3)"
echo "quarantined after 6 transitions, one event; every pair reached around it"

# the cable goes on flapping: nothing reaches the SM, no table anywhere is rewritten
lft_sets >"$WORK/a"
flap 4
disabled || fail "the link was enabled while its hold time runs"
lft_sets >"$WORK/b"
diff -q "$WORK/a" "$WORK/b" >/dev/null || fail "tables rewritten while the link is held: $(diff "$WORK/a" "$WORK/b" | head -4)"
echo "the cable flaps 8 more times while held: no table rewritten anywhere"

# the hold time ends: enabled again, back in the routes
wait_until 10 sh -c "! { [ \"\$('$FS' ctl port leaf-1 5 | sed -n 's/.* phys \([0-9]*\) .*/\1/p')\" = 3 ] || [ \"\$('$FS' ctl port '$spine' '$sport' | sed -n 's/.* phys \([0-9]*\) .*/\1/p')\" = 3 ]; }" ||
	fail "not enabled again after the hold time"
grep -q "enabled again (its hold time is over)" "$WORK/ibsmd.log" || fail "the release is not logged"
wait_until 10 sh -c "'$FS' ctl port leaf-1 5 | grep -q 'state ACTIVE'" || fail "leaf-1 port 5 not ACTIVE again: $("$FS" ctl port leaf-1 5)"
wait_until 10 verify_passes || fail "not whole after the release"
echo "enabled again after the 4 s hold, ACTIVE and routed"

# quarantined again, and released by command at once
flap 4
wait_until 5 disabled || fail "not quarantined the second time"
out=$("$IBSA" --control "$WORK/control" release) || fail "ibsa release: $out"
[ "$out" = "1 link(s) enabled again" ] || fail "ibsa release said: $out"
wait_until 10 sh -c "'$FS' ctl port leaf-1 5 | grep -q 'state ACTIVE'" || fail "not ACTIVE after ibsa release"
wait_until 10 verify_passes || fail "not whole after ibsa release"
echo "quarantined again, and enabled at once by ibsa release"
echo "link health: ok"
