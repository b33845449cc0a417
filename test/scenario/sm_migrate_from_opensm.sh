#!/usr/bin/env bash
# docs/migrating-from-opensm.md, steps 1 to 5, on fabricsim: a fabric OpenSM brought up
# (priority 10, its own SM_Key, a guid_routing_order_file that lists nobody yet) goes to
# ibsmd with no port's LID changed and no moment without a master:
# 1. `ibsmd --import-opensm` of its opensm.conf, plus the guide's show_sm_key: true and a
#    priority below OpenSM's, passes --check-config;
# 2. `ibsmd --dry-run` beside OpenSM: exit 0, no switch would change (ibsmd keeps every route
#    that is valid), OpenSM still master;
# 3. ibsmd below OpenSM's priority stands by (OpenSM master, ibsmd standby);
# 4. its priority raised in the file and reloaded (SIGHUP, as `systemctl reload`): OpenSM
#    hands the subnet over; ibsmd master, OpenSM standby, every LID as OpenSM gave it, and
#    no LFT block written (a reload that changes no routing input keeps the routes), nor by
#    another such reload as master; going back (priority below OpenSM's, reloaded) hands
#    the subnet back to OpenSM and raising it again takes it again, LIDs kept throughout;
# 5. OpenSM stopped: ibsmd stays master, fabricsim verify passes.
# Then a routing input edited under the same name (the order file now lists hosts) and a
# reload of the unchanged ibsmd.yaml: routes computed afresh, tables written.
# Usage: sm_migrate_from_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
need sminfo
FS="$BUILD/test/fabricsim/fabricsim"
IBSMD="$BUILD/daemon/ibsmd"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=12,levels=2" --max-clients 32

: >"$WORK/order"
cat >"$WORK/opensm.conf" <<C
sm_priority 10
sm_key 0x00000000c0ffee01
sminfo_polling_timeout 1000
polling_retry_number 2
routing_engine minhop
guid_routing_order_file $WORK/order
C
mkdir -p "$WORK/osm"
(cd "$WORK/osm" && OSM_TMP_DIR="$WORK/osm" OSM_CACHE_DIR="$WORK/osm" SIM_HOST=host-1 \
	LD_PRELOAD=$PRELOAD exec opensm -F "$WORK/opensm.conf" -f "$WORK/osm/opensm.log" -d 2 \
	>"$WORK/osm/stdout" 2>&1) &
PIDS+=($!)
OSM_PID=$!
wait_until 60 verify_passes || fail "OpenSM did not bring the fabric up: $(tail -3 "$WORK/osm/opensm.log")"
state_is() { [ "$(sm_state_of "$(lid_of "$1")")" = "$2" ]; }
wait_until 20 state_is host-1 3 || fail "OpenSM is not master"
"$FS" ctl lids | sort >"$WORK/lids.before"
# every switch's forwarding table, and the LFT blocks ibsmd's last sweep wrote (its own
# account beside the tables: OpenSM may write the same content again in its sweeps)
lft_dump() { "$FS" ctl lids | awk '$4 ~ /^(leaf|spine)-/ { print $4 }' | while read -r s; do echo "$s"; "$FS" ctl lft "$s"; done; }
last_written() { grep "subnet up" "$WORK/ibsmd.log" | tail -1 | grep -o '[0-9]* LFT blocks read, [0-9]* LFT blocks' | awk '{ print $5 }'; }
lft_dump >"$WORK/lft.before"
echo "OpenSM master over $(wc -l <"$WORK/lids.before") LIDs"

# 1. translate
"$IBSMD" --import-opensm "$WORK/opensm.conf" >"$WORK/ibsmd.yaml" 2>"$WORK/import.err" ||
	fail "import: $(cat "$WORK/import.err")"
grep -q '^sm_priority: 10$' "$WORK/ibsmd.yaml" && grep -q '^sm_key: 0x00000000c0ffee01$' "$WORK/ibsmd.yaml" ||
	fail "the import lost the priority or the key: $(cat "$WORK/ibsmd.yaml")"
echo "show_sm_key: true" >>"$WORK/ibsmd.yaml"
sed -i 's/^sm_priority: 10$/sm_priority: 9/' "$WORK/ibsmd.yaml" # below OpenSM's: it stands by
"$IBSMD" --check-config "$WORK/ibsmd.yaml" >/dev/null 2>"$WORK/check.err" || fail "--check-config: $(cat "$WORK/check.err")"
echo "1. imported, show_sm_key added, priority 9, --check-config: ok"

# 2. the read-only trial
rc=0
(cd "$WORK" && SIM_HOST=host-2 "$IBSMD" --transport sim --dry-run --config "$WORK/ibsmd.yaml" \
	>"$WORK/dry-run.txt" 2>"$WORK/dry-run.err") || rc=$?
[ "$rc" = 0 ] || fail "the dry run: exit $rc: $(tail -5 "$WORK/dry-run.txt" "$WORK/dry-run.err")"
grep -q "^tables: 0 of [0-9]* switches would change" "$WORK/dry-run.txt" ||
	fail "the dry run would change tables: $(grep '^tables' "$WORK/dry-run.txt")"
state_is host-1 3 || fail "OpenSM lost the subnet to a dry run"
echo "2. dry run: exit 0, $(grep -o '0 of [0-9]* switches would change' "$WORK/dry-run.txt"): ok"

# 3. ibsmd stands by
mkdir -p "$WORK/state"
(cd "$WORK" && SIM_HOST=host-2 exec "$IBSMD" --transport sim --config "$WORK/ibsmd.yaml" \
	--state-dir "$WORK/state" --control-socket "$WORK/control" >"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log") &
PIDS+=($!)
IBSMD_PID=$!
wait_until 30 grep -q "standing by" "$WORK/ibsmd.log" || fail "ibsmd does not stand by: $(tail -3 "$WORK/ibsmd.log")"
wait_until 10 state_is host-2 2 || fail "ibsmd's SMInfo is not STANDBY"
state_is host-1 3 || fail "OpenSM is no longer master"
echo "3. ibsmd stands by under OpenSM: ok"

# 4. ibsmd's priority above OpenSM's, reloaded
# reload PRIORITY: ibsmd.yaml's priority set and reloaded
reload() {
	sed -i "s/^sm_priority: .*/sm_priority: $1/" "$WORK/ibsmd.yaml"
	kill -HUP "$IBSMD_PID"
}
ups() { status_field 's["sweeps"]["count"]'; } # sweeps begun
reload 12
wait_until 30 grep -q "subnet up" "$WORK/ibsmd.log" || fail "ibsmd did not take the subnet: $(tail -5 "$WORK/ibsmd.log")"
wait_until 20 state_is host-2 3 || fail "ibsmd is not master"
wait_until 20 state_is host-1 2 || fail "OpenSM does not stand by under ibsmd"
"$FS" ctl lids | sort >"$WORK/lids.after"
diff "$WORK/lids.before" "$WORK/lids.after" >"$WORK/lids.diff" || fail "LIDs changed: $(head -4 "$WORK/lids.diff")"
lft_dump >"$WORK/lft.after"
diff "$WORK/lft.before" "$WORK/lft.after" >"$WORK/lft.diff" && [ "$(last_written)" = 0 ] ||
	fail "OpenSM's routes were rewritten on a priority reload: $(head -4 "$WORK/lft.diff"); $(last_written) LFT blocks written"
lft_sets >"$WORK/sets.master"
verify_passes || fail "fabricsim verify after the handover"
echo "4. priority 12 reloaded: OpenSM handed over, ibsmd master, OpenSM standby, no LID changed, no LFT block written: ok"
# a reload as master that changes no routing input: a full sweep, no table written
n=$(ups)
reload 13
more_ups() { [ "$(ups)" -gt "$n" ]; }
wait_until 30 more_ups || fail "no sweep after the reload as master"
sweep_over() { [ "$(status_field 's["sweeps"]["sweeping"]')" = False ]; }
wait_until 30 sweep_over || fail "the reload's sweep did not end"
lft_sets | diff "$WORK/sets.master" - >"$WORK/lft.diff" || fail "a priority reload as master wrote LFT blocks: $(head -4 "$WORK/lft.diff")"
# ibsmd's own balance (a reroute), so that OpenSM's sweep as master again changes the tables
"$IBSA" --control "$WORK/control" reroute >/dev/null || fail "ibsa reroute"
wait_until 30 sweep_over || fail "the reroute's sweep did not end"
lft_sets | diff -q "$WORK/sets.master" - >/dev/null && fail "the reroute wrote nothing: the go-back proves nothing"
# going back: below OpenSM's priority, ibsmd hands the subnet back; above it again, takes it
osm_ups() { grep -c "SUBNET UP" "$WORK/osm/opensm.log"; }
m=$(osm_ups)
reload 9
wait_until 30 state_is host-1 3 || fail "ibsmd did not hand the subnet back to OpenSM: $(tail -3 "$WORK/ibsmd.log")"
# OpenSM's own sweep as master again ends before its tables are the reference
osm_swept() { [ "$(osm_ups)" -gt "$m" ]; }
wait_until 30 osm_swept || fail "OpenSM did not sweep as master again: $(tail -3 "$WORK/osm/opensm.log")"
wait_until 20 state_is host-2 2 || fail "ibsmd does not stand by after handing back"
wait_until 30 verify_passes || fail "fabricsim verify under OpenSM again"
"$FS" ctl lids | sort | diff "$WORK/lids.before" - >/dev/null || fail "LIDs changed handing back"
lft_dump >"$WORK/lft.back"
n=$(ups)
reload 12
wait_until 30 more_ups || fail "ibsmd did not take the subnet again"
wait_until 20 state_is host-2 3 || fail "ibsmd is not master again"
lft_dump | diff "$WORK/lft.back" - >"$WORK/lft.diff" && [ "$(last_written)" = 0 ] ||
	fail "taking the subnet again rewrote routes: $(head -4 "$WORK/lft.diff"); $(last_written) LFT blocks written"
"$FS" ctl lids | sort | diff "$WORK/lids.before" - >/dev/null || fail "LIDs changed taking the subnet again"
# what ibsmd holds the switches to hold is what they hold: OpenSM rewrote them while ibsmd
# stood by, and a takeover that trusted its own last writes would think otherwise
"$IBSA" --control "$WORK/control" dump routes >"$WORK/ibsmd-lfts" || fail "ibsa dump routes"
lft_dump >"$WORK/lft.real"
python3 - "$WORK/ibsmd-lfts" "$WORK/lft.real" <<'PY' || fail "ibsmd's view of the tables is not what the switches hold"
import re, sys
mine, real, sw = {}, {}, None
for l in open(sys.argv[1]):
    m = re.match(r"Unicast lids .* of switch .*\('(.*)'\)", l)
    if m:
        sw = m.group(1)
        continue
    m = re.match(r"(0x[0-9a-fA-F]+) (\d+) ", l)
    if m and sw:
        mine[(sw, int(m.group(1), 16))] = int(m.group(2))
for l in open(sys.argv[2]):
    w = l.split()
    if len(w) == 1:
        sw = w[0]
    elif len(w) >= 2 and not l.startswith("#"):
        real[(sw, int(w[0], 0))] = int(w[1])
assert mine and real, (len(mine), len(real))
diff = [(k, mine.get(k), real.get(k)) for k in set(mine) | set(real) if mine.get(k) != real.get(k)]
assert not diff, (len(diff), sorted(diff)[:5])
PY
lft_sets >"$WORK/sets.after"
echo "   a reload as master wrote no table; back to OpenSM (priority 9) and again (12), no LID changed, no table written by ibsmd: ok"

# 5. OpenSM stopped
kill "$OSM_PID"
sleep_until_gone() { ! kill -0 "$OSM_PID" 2>/dev/null; }
wait_until 10 sleep_until_gone || fail "OpenSM did not stop"
state_is host-2 3 || fail "ibsmd is not master after OpenSM stopped"
verify_passes || fail "fabricsim verify with OpenSM gone"
"$FS" ctl lids | sort | diff "$WORK/lids.before" - >/dev/null || fail "LIDs changed after OpenSM stopped"
echo "5. OpenSM stopped: ibsmd master, every LID as OpenSM gave it: ok"

# a routing input edited under the same name: a reload of the same ibsmd.yaml routes afresh
"$FS" ctl lids | awk '$4 ~ /^host-(1|13|25|37)$/ { print $1 }' >"$WORK/order"
[ "$(wc -l <"$WORK/order")" = 4 ] || fail "the order file: $(cat "$WORK/order")"
n=$(ups)
kill -HUP "$IBSMD_PID"
wait_until 10 grep -q "a routing input file changed; routes computed afresh" "$WORK/ibsmd.log" ||
	fail "an edited order file went unnoticed: $(grep config "$WORK/ibsmd.log" | tail -2)"
wait_until 30 more_ups || fail "no sweep after the reload"
lft_sets >"$WORK/sets.edited"
! diff -q "$WORK/sets.after" "$WORK/sets.edited" >/dev/null || fail "the listed hosts were not routed afresh"
verify_passes || fail "fabricsim verify after the order file's reload"
echo "an order file edited under the same name: reload routes afresh, tables written, verify passes: ok"
echo PASS
