#!/usr/bin/env bash
# Master and standby on Debian's ibsim (not our simulator), checked with the diags through
# libumad2sim.so: ibsmd B stands by under ibsmd A and holds A's state (sync over the vendor
# class, RMPP included); kill -9 A and B takes over with A's LIDs and routes; an OpenSM
# stands by under B and takes over when B dies, keeping B's LIDs; an ibsmd C stands by
# under that OpenSM and takes over when it dies, keeping OpenSM's LIDs and routes.
# Every port ACTIVE and ibtracert between hosts after each step.
# Handovers between ibsmd and OpenSM are tested on fabricsim (sm_failover_opensm.sh), not
# here: ibsim gives an SM's answer to another SM only when it answers the requester's most
# recent request, so once both poll each other most SMInfo answers are lost.
# ibsim keeps a dead client's slot (and its IsSM) until it exits: each SM that is killed
# leaves its host for good, so every SM here has a host of its own.
# Usage: sm_failover_ibsim.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need ibsim
need opensm
need sminfo
need iblinkinfo
FS="$BUILD/test/fabricsim/fabricsim"
"$FS" dump "fattree:radix=12,levels=2" >"$WORK/ft72.net"
start_ibsim "$WORK/ft72.net"

sm() { # NAME HOST PRIORITY
	# no M_Keys here: ibsmd shows its SM_Key to OpenSM only as OpenSM does (show_sm_key),
	# or OpenSM ignores it (sm_failover_opensm.sh has them prove it by M_Key instead)
	start_named_ibsmd "$1" "$2" "$3" "sweep_interval: 0" "sm_poll_interval_ms: 500" \
		"sm_poll_retries: 3" "show_sm_key: true"
}
osm() { # NAME HOST PRIORITY: OpenSM polling every second, 2 retries (its fastest)
	local name=$1 host=$2 prio=$3
	mkdir -p "$WORK/$name"
	printf 'sminfo_polling_timeout 1000\npolling_retry_number 2\n' >"$WORK/$name/opensm.conf"
	(cd "$WORK/$name" && OSM_TMP_DIR="$WORK/$name" OSM_CACHE_DIR="$WORK/$name" \
		SIM_HOST=$host LD_PRELOAD=$UMAD2SIM exec opensm -p "$prio" -f "$WORK/$name/opensm.log" \
		-d 2 -s 1 -F "$WORK/$name/opensm.conf" >"$WORK/$name.stdout" 2>&1) &
	PIDS+=($!)
	eval "PID_$name=$!"
}
diag() { # HOST COMMAND...: a diag attached to HOST
	local host=$1
	shift
	SIM_HOST=$host umad2sim "$@"
}
lid_of() { diag "$1" ibaddr 2>/dev/null | sed -n 's/.*LID start 0x\([0-9a-f]*\).*/\1/p' | { read -r h && echo $((16#$h)); }; }
state_of() { diag host-9 sminfo "$1" 2>/dev/null | sed -n 's/.* state \([0-9]\) .*/\1/p' | grep . || echo -; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }
# every cabled port Active, and ibtracert between a spread of hosts
routed() {
	diag host-9 iblinkinfo >"$WORK/links" 2>>"$WORK/diags.log" || return 1
	grep '==(' "$WORK/links" | grep -v '\[  \] "" ( )' >"$WORK/cabled" || true
	local total active
	total=$(wc -l <"$WORK/cabled")
	active=$(grep -c 'Active/  LinkUp' "$WORK/cabled" || true)
	[ "$total" -gt 0 ] && [ "$total" = "$active" ] || return 1
	local a b
	for a in 1 17 40 72; do
		for b in 5 33 61; do
			diag host-9 ibtracert "$(lid_of "host-$a")" "$(lid_of "host-$b")" >/dev/null 2>>"$WORK/diags.log" ||
				return 1
		done
	done
}
lids() { for h in 1 2 3 4 5 9 30 72; do echo "host-$h $(lid_of "host-$h")"; done; }
items() { grep -hv '^#' "$WORK/state-$1/guid2lid" "$WORK/state-$1/sa-state" 2>/dev/null | sort; }
in_step() { [ -s "$WORK/state-$1/guid2lid" ] && [ "$(items "$1")" = "$(items "$2")" ]; }

# 1. ibsmd A master, ibsmd B standing by with A's state
sm A host-1 10
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
LID_A=$(lid_of host-1)
SIM_HOST=host-5 "$BUILD/cli/ibsa" --transport sim services add 0x100 --name kept --lease 3600 \
	>/dev/null || fail "services add"
sm B host-2 5
LID_B=$(lid_of host-2)
wait_until 30 grep -q "standing by" "$WORK/B.log" || fail "B does not stand by under A"
wait_until 10 state_is "$LID_B" 2 || fail "B is in state $(state_of "$LID_B"), want STANDBY"
wait_until 20 grep -q "in step with master" "$WORK/B.log" || fail "B got no copy from A over ibsim"
# A's file held the service when "services add" was answered; B's follows its copy
wait_until 20 in_step B A || fail "B's copy is not A's: $(diff <(items A) <(items B) | head -5)"
grep -q '^service' "$WORK/state-B/sa-state" || fail "B's copy lacks A's service"
echo "ibsmd A master (LID $LID_A), B standing by with A's $(items A | wc -l) items"
routed || fail "not routed under A"
lids >"$WORK/lids.0"

# 2. kill -9 A: B takes over with A's LIDs and routes
kill -9 "$PID_A"
wait_until 20 state_is "$LID_B" 3 || fail "B did not take over from A"
wait_until 30 grep -q "subnet up" "$WORK/B.log" || fail "B did not bring the subnet up"
wait_until 20 routed || fail "not routed after B took over"
lids >"$WORK/lids.1"
diff "$WORK/lids.0" "$WORK/lids.1" >/dev/null || fail "LIDs changed: $(diff "$WORK/lids.0" "$WORK/lids.1" | head -4)"
blocks=$(grep -h "subnet up" "$WORK/B.log" | tail -1 | grep -o "[0-9]* LFT blocks read, [0-9]* LFT blocks")
case "$blocks" in *", 0 LFT blocks") ;; *) fail "B rewrote A's routes: $blocks" ;; esac
SIM_HOST=host-9 "$BUILD/cli/ibsa" --transport sim --json services | has '"kept"' ||
	fail "B's SA lost A's service"
echo "B took over from A: LIDs kept, $blocks, A's service kept"

# 3. OpenSM at priority 1 stands by under B; kill -9 B: OpenSM takes over
osm P host-4 1
LID_P=$(lid_of host-4)
wait_until 60 state_is "$LID_P" 2 || fail "OpenSM does not stand by under B: $(state_of "$LID_P")"
state_is "$LID_B" 3 || fail "B is no longer master with a lower OpenSM"
kill -9 "$PID_B"
wait_until 60 state_is "$LID_P" 3 || fail "OpenSM did not take over from B"
wait_until 60 routed || fail "not routed after OpenSM took over"
lids >"$WORK/lids.2"
diff "$WORK/lids.0" "$WORK/lids.2" >/dev/null || fail "OpenSM changed ibsmd's LIDs: $(diff "$WORK/lids.0" "$WORK/lids.2" | head -4)"
echo "OpenSM took over from ibsmd B with its LIDs"

# 4. ibsmd C stands by under OpenSM; kill -9 OpenSM: C takes over with OpenSM's LIDs and routes
sm C host-3 0
LID_C=$(lid_of host-3)
wait_until 30 grep -q "standing by" "$WORK/C.log" || fail "C does not stand by under OpenSM"
wait_until 20 state_is "$LID_C" 2 || fail "C is in state $(state_of "$LID_C") under OpenSM"
# C asks OpenSM's SA whether it serves the sync, and sends it nothing of ibsmd's own class
# (OpenSM under libumad2sim.so crashed on one)
wait_until 10 grep -q "shows no ibsmd.sync service" "$WORK/C.log" || fail "C did not find OpenSM out"
# OpenSM answers C's next 4 polls (0.5 s apart) after that
m0=$(status_num C mads completed)
wait_until 20 status_ge C mads completed $((m0 + 4)) || fail "OpenSM stopped answering C"
kill -0 "$PID_P" 2>/dev/null || fail "OpenSM died with C standing by under it"
kill -9 "$PID_P"
wait_until 30 state_is "$LID_C" 3 || fail "C did not take over from OpenSM"
wait_until 30 grep -q "subnet up" "$WORK/C.log" || fail "C did not bring the subnet up"
wait_until 20 routed || fail "not routed after C took over from OpenSM"
lids >"$WORK/lids.3"
diff "$WORK/lids.2" "$WORK/lids.3" >/dev/null || fail "OpenSM's LIDs changed: $(diff "$WORK/lids.2" "$WORK/lids.3" | head -4)"
blocks=$(grep -h "subnet up" "$WORK/C.log" | tail -1 | grep -o "[0-9]* LFT blocks read, [0-9]* LFT blocks")
case "$blocks" in *", 0 LFT blocks") ;; *) fail "C rewrote OpenSM's routes: $blocks" ;; esac
echo "C took over from OpenSM: LIDs kept, $blocks"
echo PASS
