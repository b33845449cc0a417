#!/usr/bin/env bash
# A babbling port: a port with a fault that sends trap 129 (local link integrity) over and
# over, heedless of TrapRepress, costs the SM a repress for each and every subscriber a
# Report. After trap_flood_threshold traps about itself within link_flap_window, ibsmd
# disables its link at the end nearer the SM, says so once with the count, leaves the rest
# of the fabric alone, enables it again after link_flap_hold (or at once on `ibsa
# release`). A host that sends traps naming another node's port has nothing disabled; a
# port that sends a trap now and then is left alone.
# Usage: sm_babbling_port.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
PROBE="$BUILD/test/sa_probe"
start_fabricsim "fattree:radix=8,levels=2" # 4 spines, 8 leaves, 32 hosts
printf 'trap_flood_threshold: 100\nlink_flap_window: 60\nlink_flap_hold: 4\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"
phys() { "$FS" ctl port "$1" "$2" | sed -n 's/.* phys \([0-9]*\) .*/\1/p'; }
events() { grep -c "event=link_quarantined" "$WORK/ibsmd.log" || true; }
read -r hleaf hport < <("$FS" ctl port host-5 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
read -r spine sport < <("$FS" ctl port leaf-2 5 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')

# a port that reports a trap now and then (5 a second): far below the threshold, left alone.
# It babbles until the SM has heard 15 of its traps.
traps() { "$IBSA" --control "$WORK/control" status | sed -n 's/^traps: *\([0-9]*\) received.*/\1/p'; }
heard() { [ "$(traps)" -ge "$1" ]; }
t0=$(traps)
"$FS" ctl babble host-7 1 5 >/dev/null
wait_until 10 heard $((t0 + 15)) || fail "the SM heard $(($(traps) - t0)) traps of host-7 in 10 s, at 5 a second"
"$FS" ctl babble host-7 1 0 >/dev/null
[ "$(events)" = 0 ] || fail "a port with 15 traps at 5 a second was quarantined: $(grep link_quarantined "$WORK/ibsmd.log")"
echo "host-7: 15 traps at 5 a second, heard and left alone"

# a host lying about whose port is in trouble: 300 traps naming leaf-2's port 5
leaf2=$(lid_of leaf-2)
before=$("$IBSA" --control "$WORK/control" status | sed -n 's/^traps: *\([0-9]*\) received.*/\1/p')
out=$(cd "$WORK" && SIM_HOST=host-9 "$PROBE" --trap "$leaf2" 5 300 2>&1) || fail "sa_probe --trap (exit $?): $out"
[ "$out" = "traps 300" ] || fail "sa_probe said: $out"
# the traps cross the simulator in their own queue to the SM, no faster than the probe's own
# last answer: the SM's count is waited for
wait_until 10 heard $((before + 300)) || fail "the SM heard $(($(traps) - before)) of host-9's 300 traps"
[ "$(events)" = 0 ] || fail "300 traps from host-9 naming leaf-2 port 5 disabled a link: $(grep link_quarantined "$WORK/ibsmd.log")"
[ "$(phys leaf-2 5)" = 5 ] || fail "leaf-2 port 5 is not LinkUp: phys $(phys leaf-2 5)"
echo "300 traps from host-9 naming leaf-2 port 5: nothing disabled"

# host-5's port babbles at 500 traps a second: its link is held at the leaf's end
lft_sets >"$WORK/a"
"$FS" ctl babble host-5 1 500 >/dev/null
wait_until 5 sh -c "[ \"\$('$FS' ctl port '$hleaf' '$hport' | sed -n 's/.* phys \([0-9]*\) .*/\1/p')\" = 3 ]" ||
	fail "host-5's link was not disabled at $hleaf port $hport: phys $(phys "$hleaf" "$hport")"
[ "$(events)" = 1 ] || fail "$(events) quarantine events, want one"
grep "event=link_quarantined" "$WORK/ibsmd.log" | has "sent traps 100 times" ||
	fail "the event does not count the traps: $(grep link_quarantined "$WORK/ibsmd.log")"
grep "event=link_quarantined" "$WORK/ibsmd.log" | has "traps=100" || fail "no traps=100 field"
wait_until 10 verify_passes || fail "the rest of the fabric is not whole: $("$FS" verify | tail -3)"
# the sweep that took host-5's routes out has ended
wait_until 5 awk '/event=link_quarantined/ { q = NR } /subnet up/ { u = NR } END { exit !(q && u > q) }' "$WORK/ibsmd.log" ||
	fail "no sweep ended after the quarantine"
lft_sets >"$WORK/b"
# the routes to host-5's LID leave the tables; nothing else is rewritten: at most one
# block per switch
changed=$(join "$WORK/a" "$WORK/b" | awk '$2 != $3' | wc -l)
[ "$changed" -le 12 ] || fail "$changed switches rewritten for one host link"
echo "host-5 babbling at 500/s: quarantined after 100 traps, one event, the rest whole"

# the hold time ends: enabled again; it babbles again and is held again; ibsa release
wait_until 10 grep -q "enabled again (its hold time is over)" "$WORK/ibsmd.log" ||
	fail "not enabled again after the hold time"
wait_until 5 sh -c "[ \"\$(grep -c event=link_quarantined '$WORK/ibsmd.log')\" = 2 ]" ||
	fail "the port babbling again was not held again: $(events) events"
echo "enabled after the 4 s hold, babbled again, held again"
"$FS" ctl babble host-5 1 0 >/dev/null
out=$("$IBSA" --control "$WORK/control" release) || fail "ibsa release: $out"
[ "$out" = "1 link(s) enabled again" ] || fail "ibsa release said: $out"
wait_until 10 sh -c "'$FS' ctl port host-5 1 | grep -q 'state ACTIVE'" || fail "host-5 not ACTIVE after ibsa release"
wait_until 10 verify_passes || fail "not whole after ibsa release"
echo "fault gone, ibsa release: host-5 ACTIVE and routed"

# a switch port babbling about an inter-switch link: held at the end nearer the SM
"$FS" ctl babble leaf-2 5 500 >/dev/null
wait_until 5 sh -c "[ \"\$('$FS' ctl port leaf-2 5 | sed -n 's/.* phys \([0-9]*\) .*/\1/p')\" = 3 ] || [ \"\$('$FS' ctl port '$spine' '$sport' | sed -n 's/.* phys \([0-9]*\) .*/\1/p')\" = 3 ]" ||
	fail "leaf-2 port 5 babbling: its link was not disabled"
wait_until 10 verify_passes || fail "routes do not avoid the held link: $("$FS" verify | tail -3)"
"$FS" ctl babble leaf-2 5 0 >/dev/null
echo "leaf-2 port 5 babbling: its link held, every pair reached around it"
echo "babbling port: ok"
