#!/usr/bin/env bash
# ibsmd and OpenSM on one subnet, each way round: ibsmd stands by under an OpenSM master and
# takes over when it dies, keeping OpenSM's LIDs and routes (no LFT block written); OpenSM
# coming back at a higher priority gets the subnet by handover; an ibsmd of higher priority
# gets it back from OpenSM by handover; OpenSM, standing by under ibsmd, takes over when
# ibsmd is killed. fabricsim verify passes after each step.
# Both protect their ports with the same M_Key: that is how OpenSM and ibsmd show each other
# the SM_Key (OpenSM ignores an SM that shows none), while a host without it sees key 0.
# Usage: sm_failover_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need opensm
need sminfo
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=12,levels=2" --max-clients 32

osm() { # NAME HOST PRIORITY: OpenSM polling every second, 2 retries (its fastest)
	local name=$1 host=$2 prio=$3
	mkdir -p "$WORK/$name"
	printf 'sminfo_polling_timeout 1000\npolling_retry_number 2\nm_key 0x5eed00005eed0000\nm_key_protection_level 1\n' \
		>"$WORK/$name/opensm.conf"
	(cd "$WORK/$name" && OSM_TMP_DIR="$WORK/$name" OSM_CACHE_DIR="$WORK/$name" \
		SIM_HOST=$host LD_PRELOAD=$PRELOAD exec opensm -p "$prio" -f "$WORK/$name/opensm.log" \
		-d 2 -s 1 -F "$WORK/$name/opensm.conf" \
		>"$WORK/$name.stdout" 2>&1) &
	PIDS+=($!)
	eval "PID_$name=$!"
}
sm() {
	start_named_ibsmd "$1" "$2" "$3" "sweep_interval: 1" "m_key: 0x5eed00005eed0000" "m_key_protect: 1"
}
state_of() { sm_state_of "$@"; }
states() { echo "$(state_of "$(lid_of host-1)")/$(state_of "$(lid_of host-2)")"; }
states_are() { [ "$(states)" = "$1" ]; }
state_is() { [ "$(state_of "$(lid_of "$1")")" = "$2" ]; }

# 1. OpenSM master (host-1, priority 10), ibsmd B (host-2, priority 5) stands by
osm O host-1 10
wait_until 60 grep -q "SUBNET UP" "$WORK/O/opensm.log" || fail "OpenSM did not bring the subnet up"
sm B host-2 5
wait_until 30 grep -q "standing by" "$WORK/B.log" || fail "ibsmd does not stand by under OpenSM"
wait_until 10 states_are 3/2 || fail "OpenSM/ibsmd states $(states), want 3/2"
echo "OpenSM master, ibsmd standing by"
"$FS" ctl lids | sort >"$WORK/lids.0"
lft_sets >"$WORK/lft.0"

# 2. kill -9 OpenSM: ibsmd takes over with OpenSM's LIDs and routes
kill -9 "$PID_O"
wait_until 20 grep -q "subnet up" "$WORK/B.log" || fail "ibsmd did not take over from OpenSM"
verify_passes || fail "not routed after the takeover: $("$FS" verify | tail -2)"
"$FS" ctl lids | sort >"$WORK/lids.1"
diff "$WORK/lids.0" "$WORK/lids.1" >/dev/null || fail "LIDs changed: $(diff "$WORK/lids.0" "$WORK/lids.1" | head -4)"
lft_sets >"$WORK/lft.1"
diff "$WORK/lft.0" "$WORK/lft.1" >/dev/null || fail "OpenSM's routes were rewritten: $(diff "$WORK/lft.0" "$WORK/lft.1" | head -4)"
echo "ibsmd took over from OpenSM: $(grep -o '[0-9]* LFT blocks read, [0-9]* LFT blocks' "$WORK/B.log" | tail -1) written"

# 3. OpenSM back at priority 12: ibsmd hands the subnet over
osm O2 host-1 12
wait_until 30 grep -q "handed over" "$WORK/B.log" || fail "ibsmd did not hand over to OpenSM"
wait_until 30 states_are 3/2 || fail "after the handover to OpenSM: $(states), want 3/2"
wait_until 30 verify_passes || fail "not routed after the handover to OpenSM"
echo "handover ibsmd -> OpenSM"

# 4. an ibsmd of priority 14 joins: OpenSM hands the subnet to it
sm A host-3 14
wait_until 60 bash -c "grep -q 'SMInfo Set HANDOVER' '$WORK/A.log'" || fail "OpenSM did not hand over to ibsmd"
wait_until 30 state_is host-3 3 || fail "ibsmd A is not master"
wait_until 30 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
verify_passes || fail "not routed after the handover to ibsmd"
echo "handover OpenSM -> ibsmd"
# a host without the M_Key reads SMInfo from both: neither shows it the SM_Key
for h in host-3 host-1; do
	key=$(on_sim host-9 smpdump "$(lid_of $h)" 0x20 2>/dev/null | awk 'NR == 1 { print $5 $6 $7 $8 }')
	[ "$key" = 0000000000000000 ] || fail "the SM on $h showed its SM_Key to a host: $key"
done

# 5. OpenSM and ibsmd B stand by under A; kill -9 A: the higher of them (OpenSM, 12) takes over
wait_until 20 states_are 2/2 || fail "OpenSM/B should both stand by under A: $(states)"
kill -9 "$PID_A"
wait_until 30 state_is host-1 3 || fail "OpenSM did not take over from ibsmd"
wait_until 30 verify_passes || fail "not routed after OpenSM's takeover"
# B notices A is gone before OpenSM does (0.5 s polls against 1 s): it may still be deciding
wait_until 30 state_is host-2 2 || fail "B is not standing by under OpenSM"
echo "OpenSM took over from ibsmd; B stands by"
echo PASS
