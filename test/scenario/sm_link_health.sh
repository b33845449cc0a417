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
# the hold must outlast the script's second round of flaps, which a loaded machine slows:
# scaled like every deadline; what is judged below is on fabricsim's clock
HOLD=$(slow_s 4)
printf 'link_flap_threshold: 6\nlink_flap_window: 60\nlink_flap_hold: %s\n' "$HOLD" >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"
read -r spine sport < <("$FS" ctl port leaf-1 5 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
phys() { "$FS" ctl port "$1" "$2" | sed -n 's/.* phys \([0-9]*\) .*/\1/p'; }
disabled() { [ "$(phys leaf-1 5)" = 3 ] || [ "$(phys "$spine" "$sport")" = 3 ]; }
# the simulator's own record of the link: its two ports' phys events, the cable, LFT blocks
journal() { "$FS" ctl journal "${1:-0}" | awk -v s="$spine" -v p="$sport" \
	'($3 == "phys" && (($4 == s && $5 == p) || ($4 == "leaf-1" && $5 == 5))) ||
	 ($3 == "cable" && $4 == "leaf-1" && $5 == 5) || $3 == "lft"'; }
journal_has() { journal "${2:-0}" | awk -v k="$1" '$3 " " $6 == k { f = 1 } END { exit !f }'; }
seq_now() { "$FS" ctl journal | tail -1 | awk '{ print $1 + 1 }'; }
flap() { # N: the cable at leaf-1 port 5 goes down and up N times, each seen by the SM
	for _ in $(seq 1 "$1"); do
		"$FS" ctl link down leaf-1 5 >/dev/null
		sleep 0.25
		"$FS" ctl link up leaf-1 5 >/dev/null
		sleep 0.25
	done
}

flap 4 # 8 transitions: the threshold is 6
wait_until 5 journal_has "phys disabled" || fail "the link was not disabled after 8 transitions: phys $(phys leaf-1 5) / $(phys "$spine" "$sport")"
n=$(grep -c "event=link_quarantined" "$WORK/ibsmd.log" || true)
[ "$n" = 1 ] || fail "$n quarantine events, want one"
grep "event=link_quarantined" "$WORK/ibsmd.log" | has "went up or down 6 times" ||
	fail "the event does not say how often: $(grep link_quarantined "$WORK/ibsmd.log")"
wait_until 10 verify_passes || fail "routes do not avoid the quarantined link: $("$FS" verify | tail -3)"
echo "quarantined after 6 transitions, one event; every pair reached around it"

# the cable goes on flapping while the link is held: the port stays disabled, nothing
# reaches the SM, no table anywhere is rewritten; then the hold ends and it is enabled
s0=$(seq_now)
flap 4
wait_until $((HOLD + 10)) journal_has "phys enabled" "$s0" ||
	fail "not enabled again after the hold time: phys $(phys leaf-1 5) / $(phys "$spine" "$sport")"
journal 0 >"$WORK/journal"
python3 - "$WORK/journal" "$s0" "$HOLD" <<'PY' || fail "held link: $(tail -1 "$WORK/held")"
import sys
ev = [l.split() for l in open(sys.argv[1])]
s0, hold = int(sys.argv[2]), float(sys.argv[3])
dis = next(float(e[1]) for e in ev if e[2] == "phys" and e[5] == "disabled")
en = next(float(e[1]) for e in ev if e[2] == "phys" and e[5] == "enabled")
with open(sys.argv[1].replace("journal", "held"), "w") as out:
    if en - dis < hold - 0.01:
        out.write(f"enabled {en - dis:.3f} s after it was disabled, before the {hold:g} s hold ended\n")
        sys.exit(1)
    flaps = [float(e[1]) for e in ev if int(e[0]) >= s0 and e[2] == "cable" and float(e[1]) < en]
    if not flaps:
        out.write("no flap of the second round came while the link was held (the script ran "
                  "slower than the hold time: raise IBSMD_TEST_SLOW)\n")
        sys.exit(1)
    lft = [e for e in ev if e[2] == "lft" and flaps[0] <= float(e[1]) < en]
    if lft:
        out.write(f"{len(lft)} LFT blocks written while the link was held, first {' '.join(lft[0][2:])}\n")
        sys.exit(1)
    print(f"the cable flapped {len(flaps)} times while held: still disabled, no table rewritten "
          f"anywhere; enabled {en - dis:.2f} s after (hold {hold:g} s), by fabricsim's clock")
PY
grep -q "enabled again (its hold time is over)" "$WORK/ibsmd.log" || fail "the release is not logged"
wait_until 10 sh -c "'$FS' ctl port leaf-1 5 | grep -q 'state ACTIVE'" || fail "leaf-1 port 5 not ACTIVE again: $("$FS" ctl port leaf-1 5)"
wait_until 10 verify_passes || fail "not whole after the release"
echo "enabled again after the hold, ACTIVE and routed"

# quarantined again, and released by command at once
s1=$(seq_now)
flap 4
wait_until 5 journal_has "phys disabled" "$s1" || fail "not quarantined the second time"
out=$("$IBSA" --control "$WORK/control" release) || fail "ibsa release: $out"
[ "$out" = "1 link(s) enabled again" ] || fail "ibsa release said: $out"
wait_until 10 sh -c "'$FS' ctl port leaf-1 5 | grep -q 'state ACTIVE'" || fail "not ACTIVE after ibsa release"
wait_until 10 verify_passes || fail "not whole after ibsa release"
echo "quarantined again, and enabled at once by ibsa release"
echo "link health: ok"
