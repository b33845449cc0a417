#!/usr/bin/env bash
# A script's saquery calls, one at a time from one host, on Debian's ibsim: all 50 answered
# with a PathRecord. libumad2sim.so carries no RMPP ACK back, so every one-segment GetTable
# answer stayed a transfer under way until it timed out (1.2 s), counted against the host's
# 16: the 17th query in a row got BUSY, and ibsmd logged nothing at its default level
# (OpenSM answers all). A new question now ends the host's answers already sent whole.
# The unfixed SA fails here when the calls come faster than 16 in 1.2 s: about 40 ms each on
# a quiet machine, 90 ms at load 9 (the 17th to 20th BUSY); test_sa_handlers'
# serial_tables_unacked does not depend on pace.
# ibsmd runs through --transport umad under libumad2sim.so, as the diags do.
# Usage: sa_serial_queries_ibsim.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need ibsim
need saquery
# one switch, three hosts; port GUIDs given, so their GIDs are known
cat >"$WORK/serial.net" <<'EOF'
switchguid=0x0000000000200000
Switch	4 "sw-1"
[1]	"host-1"[1]
[2]	"host-2"[1]
[3]	"host-3"[1]

caguid=0x0000000000100000
Ca	1 "host-1"
[1](100001)	"sw-1"[1]

caguid=0x0000000000100002
Ca	1 "host-2"
[1](100003)	"sw-1"[2]

caguid=0x0000000000100004
Ca	1 "host-3"
[1](100005)	"sw-1"[3]
EOF
start_ibsim "$WORK/serial.net"
SIM_HOST=host-3 umad2sim_bg "$BUILD/daemon/ibsmd" --transport umad --state-dir "$WORK/state" \
	--sweep-interval 0 >"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log"
PIDS+=("$UMAD2SIM_PID")
wait_until 60 grep -q "subnet up" "$WORK/ibsmd.log" || fail "ibsmd did not bring the subnet up"

# from host-1, of its path to host-2: each saquery a process of its own, as in a script,
# back to back (the umad2sim helper's ldd per call, or a grep, would space them out past the
# time-out the unfixed SA held each answer for, and hide the fault); from $WORK, for the
# shim's sysfs
n=50 answered=0 first_bad=
pre=$(umad2sim_preload "$(command -v saquery)") limit=$(slow_s 10)
cd "$WORK" || fail "cd $WORK"
for i in $(seq 1 $n); do
	# matched by bash, not grep: no process between two queries but the next query
	out=$(SIM_HOST=host-1 LD_PRELOAD=$pre timeout "$limit" saquery -p \
		--sgid-to-dgid fe80::10:1-fe80::10:3 2>&1) &&
		[[ $out == *"PathRecord dump"* && $out == *dgid*fe80::10:3* ]] && {
		answered=$((answered + 1))
		continue
	}
	[ -n "$first_bad" ] || first_bad="query $i: ${out:0:200}"
done
echo "$answered of $n serial saquery -p calls from host-1 answered with a PathRecord"
[ "$answered" = $n ] || fail "$((n - answered)) of $n unanswered; first: $first_bad"
grep "table transfers under way" "$WORK/ibsmd.log" && fail "one question at a time met the port's quota"
kill -0 "$UMAD2SIM_PID" || fail "ibsmd died"
echo PASS
