#!/usr/bin/env bash
# A switch that resets between two sweeps (removed and added back within 0.05-0.2 s, faster
# than any sweep sees it gone) comes back with empty forwarding tables. ibsmd must recognize
# the reset by what the switch reports (its LinearFDBTop), not by having missed it, and
# program it again: unicast and multicast (the groups' MFTs) whole within a few seconds.
# Before the fix the switch kept an empty LFT forever (2,446 pairs unreachable here, later
# sweeps sent it nothing).
# Usage: ibsmd_switch_reset.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=16,levels=2" # 8 spines, 16 leaves, 128 hosts
# the default sweep interval: the reset must be found from the traps of its neighbours
SIM_HOST=host-1 start_ibsmd
wait_until 10 verify_passes || fail "not up: $("$FS" verify | tail -3)"
# multicast groups, so that the switches' MFTs matter too
"$BUILD/test/mcast_churn" --hosts 40 --groups 4 --ops 120 --seed 3 >"$WORK/members.txt" \
	2>"$WORK/churn.log" || fail "mcast_churn: $(cat "$WORK/churn.log")"
# verify knows the members only from the MFTs (a reset switch's empty MFT drops its hosts
# from its count): the count must equal the SA's members (hosts seen gone lose theirs)
sa_members() {
	SIM_HOST=host-127 "$BUILD/cli/ibsa" --transport sim --sm-key 1 --json mcast |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}
mcast_ok() {
	local n
	n=$(sa_members) || return 1
	[ "$n" -gt 0 ] && check_verify 'r["ok"]' 'r["multicast"]["bad"] == 0' \
		"r['multicast']['members'] == $n" >/dev/null 2>&1
}
wait_until 10 mcast_ok || fail "multicast not programmed: $("$FS" verify | grep -E 'multicast|verdict'), SA: $(sa_members) members"
echo "multicast: $(sa_members) members, each reached by the MFTs"

round=0
for sw in spine-2 spine-5 leaf-3; do
	for gap in 0.05 0.2; do
		round=$((round + 1))
		"$FS" ctl node remove "$sw" >/dev/null
		sleep "$gap"
		"$FS" ctl node add "$sw" >/dev/null
		wait_until 8 mcast_ok ||
			fail "round $round: $sw reset ($gap s) not reprogrammed: $("$FS" verify | grep -E 'unicast|multicast|verdict' | tr '\n' ' ')"
		echo "round $round: $sw back after $gap s: reprogrammed, verify PASS, multicast whole"
	done
done
grep -q "was reset\|may have reset" "$WORK/ibsmd.log" || fail "the reset was never named in the log"

# A dense irregular graph (random30, updn): switches of many links reset, each repaired from
# the neighbours' traps, well within the 10 s between light sweeps.
stop_sims
start_fabricsim "$(dirname "$0")/fabrics/random30-updn-loop.net"
# (the SM on h0002, behind r022)
SIM_HOST=h0002 start_ibsmd --routing-engine updn
wait_until 10 verify_passes || fail "random30 not up: $("$FS" verify | tail -3)"
# reset SW: off for 0.1 s and back; then reprogrammed (verify passes), and by fabricsim's
# clock its tables were written within 5 s of its return, well before a light sweep (every
# 10 s) could have found it: the traps did
reset() {
	local sw=$1 j took
	j=$("$FS" ctl journal | tail -1 | awk '{ print $1 + 1 }')
	"$FS" ctl node remove "$sw" >/dev/null
	sleep 0.1
	"$FS" ctl node add "$sw" >/dev/null
	wait_until 5 verify_passes ||
		fail "random30: $sw reset, not reprogrammed: $("$FS" verify | grep -E 'unicast|verdict' | tr '\n' ' ')"
	took=$("$FS" ctl journal "$j" | awk -v sw="$sw" '$3 == "node" && $4 == sw && $6 == "add" { a = $2 }
		$3 == "lft" && $4 == sw && a { l = $2 } END { if (a && l) printf "%.2f", l - a }')
	[ -n "$took" ] || fail "random30: no LFT block written to $sw after it came back"
	awk -v t="$took" 'BEGIN { exit !(t < 5) }' ||
		fail "random30: $sw reset, its tables written $took s after it came back (light sweeps every 10 s)"
	echo "  $sw: tables written $took s after it came back"
}
for sw in r027 r014 r001 r027 r027; do
	reset "$sw"
done
echo "random30 (updn): five resets, each reprogrammed from the neighbours' traps"

# The SM's own switch resets: the traps' way to the SM crosses its emptied table and no
# trap gets there. The SM's own port falls out of ACTIVE and ibsmd sees it within a second;
# before, the next light sweep found the reset, up to 10 s later.
reset r022
grep -q "the SM's own port \(left ACTIVE\|is INIT\)" "$WORK/ibsmd.log" || fail "the SM's own port falling out of ACTIVE was not logged"
echo "random30: the SM's own switch reset, reprogrammed from its own port's state"
echo "ibsmd reprograms a switch that reset between sweeps: ok"
