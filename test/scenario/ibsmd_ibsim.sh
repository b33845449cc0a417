#!/usr/bin/env bash
# ibsmd on Debian's ibsim (not our simulator) through its sim transport: ibsim's example
# fabrics and a 648-host fat tree come up; iblinkinfo (infiniband-diags) shows every link
# Active and ibtracert finds paths between hosts. Then ibsmd as a daemon through
# --transport umad under libumad2sim.so, whose sysfs says INIT for good: the subnet comes up
# once and stays swept once (it resent 134 PortInfo Sets at 1, 2, 4 and 8 s, taking the stale
# sysfs for a reset switch).
# Usage: ibsmd_ibsim.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need iblinkinfo
FS="$BUILD/test/fabricsim/fabricsim"
EX=/usr/share/doc/ibsim-utils/net-examples

bring_up() { # NETFILE
	start_ibsim "$1"
	ibsmd_once || fail "ibsmd on ibsim with $1: $(cat "$WORK/ibsmd.out"; tail -5 "$WORK/ibsmd.log")"
	umad2sim iblinkinfo >"$WORK/links" 2>>"$WORK/diags.log" || fail "iblinkinfo failed"
	local total active
	# cabled ports only: an empty port shows as Down/Polling towards ""
	grep '==(' "$WORK/links" | grep -v '\[  \] "" ( )' >"$WORK/cabled" || true
	total=$(wc -l <"$WORK/cabled")
	active=$(grep -c 'Active/  LinkUp' "$WORK/cabled" || true)
	[ "$total" -gt 0 ] && [ "$total" = "$active" ] ||
		fail "$1: $active of $total links Active: $(grep -v Active "$WORK/cabled" | head -3)"
	echo "$(basename "$1"): $(cut -d, -f1-3 "$WORK/ibsmd.out"); $active links Active"
	stop_sims
}

for f in net net.2sw2path net.2sw2path4hca net.2sw2path4hca2port; do
	bring_up "$EX/$f"
done
"$FS" dump "fattree:radix=36,levels=2" >"$WORK/ft648.net"
bring_up "$WORK/ft648.net"

# and the routes work: ibtracert between hosts on different leaves
start_ibsim "$WORK/ft648.net"
ibsmd_once || fail "second run on the 648-host fabric"
umad2sim ibnetdiscover >"$WORK/disc" 2>>"$WORK/diags.log" || fail "ibnetdiscover on ibsim: $(tail -3 "$WORK/diags.log")"
lids=$(grep -o '# lid [0-9]* lmc' "$WORK/disc" | awk '{ print $3 }' | sort -n | uniq | awk 'NR % 97 == 1')
set -- $lids
for a in "$@"; do
	for b in "$@"; do
		[ "$a" = "$b" ] && continue
		umad2sim ibtracert "$a" "$b" >/dev/null 2>>"$WORK/diags.log" ||
			fail "no path from LID $a to LID $b on ibsim"
	done
done
echo "ibtracert between $# hosts on ibsim: ok"
stop_sims

"$FS" dump "fattree:radix=8,levels=2" >"$WORK/ft32.net"
start_ibsim "$WORK/ft32.net"
SIM_HOST=host-1 umad2sim_bg "$BUILD/daemon/ibsmd" --transport umad --state-dir "$WORK/state-umad" \
	--sweep-interval 0 --control-socket "$WORK/control-umad" >"$WORK/umad.out" 2>"$WORK/umad.log"
PIDS+=("$UMAD2SIM_PID")
wait_until 60 grep -q "subnet up" "$WORK/umad.log" || fail "ibsmd under libumad2sim.so: $(tail -5 "$WORK/umad.log")"
# six seconds of the daemon's own uptime (it looks at its port every second), whatever the
# script's pace
uptime() { "$BUILD/cli/ibsa" --control "$WORK/control-umad" --json status |
	python3 -c 'import json,sys; print(int(json.load(sys.stdin)["uptime_s"]))'; }
up_at=$(uptime)
uptime_past() { [ "$(uptime)" -ge "$1" ]; }
wait_until 30 uptime_past $((up_at + 6)) || fail "ibsmd's uptime did not pass $((up_at + 6)) s"
grep -q "configured by nobody" "$WORK/umad.log" &&
	fail "ibsmd took libumad2sim.so's stale sysfs for a reset switch: $(grep -c 'subnet up\|sweep' "$WORK/umad.log") sweep lines"
echo "ibsmd through --transport umad under libumad2sim.so: up, its port not taken for a reset switch for 6 s after"
echo "ibsmd on ibsim: ok"
