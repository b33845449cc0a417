#!/usr/bin/env bash
# The performance manager, from outside: fabricsim raises a port's error counters ("ctl
# errors") and the daemon, sweeping every port's counters each second, raises exactly one
# counter_threshold event naming the node, port and counter; the metrics file and "ibsa
# counters" show the errors. Counters are kept past their hardware width: twice 40,000
# symbol errors (the field saturates at 65,535) total 80,000, because the PM clears a
# counter past half its range. Under the threshold, no event. perfquery (infiniband-diags)
# reads the same counters from the simulator. A link going down and up and another SM
# appearing raise link_down, link_up and sm_appeared events with their fields.
# Usage: ibsmd_pm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need perfquery
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=8,levels=3"
SIM_HOST=host-1 start_ibsmd --config <(printf 'pm_interval: 1\nsweep_interval: 0\nmetrics_interval: 1\n')
ctr() { "$IBSA" --control "$WORK/control" --json counters "$@"; }
total() { # NODE PORT COUNTER
	ctr "$1" | python3 -c "import json,sys; print(sum(r['$3'] for r in json.load(sys.stdin) if r['port']==$2))"
}
wait_until 20 sh -c "'$IBSA' --control '$WORK/control' --json counters | grep -q symbol_errors" ||
	fail "no counters read"
n=$(ctr | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" -gt 100 ] || fail "the PM read $n ports"
echo "the PM reads $n ports each second"

events() { grep -c "event=counter_threshold" "$WORK/ibsmd.log" || true; }
# wait_until takes a command: these evaluate afresh at each try
has_event() { [ "$(events)" -ge 1 ]; }
total_is() { [ "$(total "$1" "$2" "$3")" = "$4" ]; }
pm_sweeps() { status_field 's["pm"]["sweeps"]'; }
pm_sweeps_reach() { [ "$(pm_sweeps)" -ge "$1" ]; }
"$FS" ctl errors core-1 3 symbol_errors 5 >/dev/null
# the read that counts them is the one that would raise the event
wait_until 10 total_is core-1 3 symbol_errors 5 || fail "5 symbol errors counted as $(total core-1 3 symbol_errors)"
[ "$(events)" = 0 ] || fail "an event for 5 symbol errors (threshold 10)"
"$FS" ctl errors core-1 3 symbol_errors 500 >/dev/null
wait_until 10 has_event || fail "no event for 500 symbol errors"
# two more sweeps, each reading core-1 port 3 again (the one under way may have read it
# already): still one event
n=$(pm_sweeps)
wait_until 10 pm_sweeps_reach $((n + 3)) || fail "the PM stopped sweeping at $(pm_sweeps) sweeps"
[ "$(events)" = 1 ] || fail "$(events) events for one burst: $(grep counter_threshold "$WORK/ibsmd.log")"
grep "event=counter_threshold" "$WORK/ibsmd.log" | has 'node_desc=core-1 port=3 counter=symbol_errors delta=500 threshold=10' ||
	fail "the event: $(grep counter_threshold "$WORK/ibsmd.log")"
echo "5 errors: no event; 500 more: one event naming core-1 port 3: ok"
wait_until 5 grep -q 'port_counter_total{guid="0x[0-9a-f]*",port="3",node="core-1",counter="symbol_errors"} 505' "$WORK/state/ibsmd.prom" ||
	fail "metrics: $(grep 'port_counter_total{' "$WORK/state/ibsmd.prom")"
grep -q 'ibsmd_port_errors_total{counter="symbol_errors"} 505' "$WORK/state/ibsmd.prom" ||
	fail "metrics total: $(grep port_errors_total "$WORK/state/ibsmd.prom")"
echo "metrics: core-1 port 3 symbol_errors 505, fabric total 505: ok"

# past the hardware's 16 bits, and other counters, with perfquery as a second reader
"$FS" ctl errors core-1 4 symbol_errors 40000 >/dev/null
"$FS" ctl errors core-1 4 link_downed 2 >/dev/null
"$FS" ctl errors core-1 4 xmit_discards 7 >/dev/null
wait_until 10 total_is core-1 4 symbol_errors 40000 || fail "40000: $(total core-1 4 symbol_errors)"
lid=$(lid_of core-1)
wait_until 10 sh -c "LD_PRELOAD='$PRELOAD' SIM_HOST=host-5 perfquery $lid 4 | grep -q 'SymbolErrorCounter:\.*0$'" ||
	fail "the PM did not clear a counter past half its range: $(on_sim host-5 perfquery "$lid" 4 | grep Symbol)"
"$FS" ctl errors core-1 4 symbol_errors 40000 >/dev/null
wait_until 10 total_is core-1 4 symbol_errors 80000 || fail "80000: $(total core-1 4 symbol_errors)"
[ "$(total core-1 4 link_downed)" = 2 ] && [ "$(total core-1 4 xmit_discards)" = 7 ] ||
	fail "link_downed $(total core-1 4 link_downed), xmit_discards $(total core-1 4 xmit_discards)"
"$IBSA" --control "$WORK/control" counters core-1 | has "^core-1 .* 4 .* 80000 " ||
	fail "ibsa counters: $("$IBSA" --control "$WORK/control" counters core-1)"
echo "80000 symbol errors through a 16-bit counter (cleared past half), link_downed 2, xmit_discards 7: ok"

# the other structured events: a link going down and coming back, another SM appearing
"$FS" ctl link down core-1 5 >/dev/null
# the SM may see the link go from either end: core-1's port 5, or the far end's port whose
# peer is core-1 port 5
core1=$("$FS" ctl lids | awk '$4 == "core-1" { print $1 }')
[ -n "$core1" ] || fail "no GUID for core-1"
core1_down() {
	grep 'event=link_down' "$WORK/ibsmd.log" |
		grep -q -e "node_guid=$core1 node_desc=core-1 port=5 peer_guid=0x" \
			-e "peer_guid=$core1 peer_port=5\]"
}
wait_until 20 core1_down || fail "no link_down event for core-1 port 5: $(grep event=link_down "$WORK/ibsmd.log")"
"$FS" ctl link up core-1 5 >/dev/null
wait_until 20 grep -q 'event=link_up' "$WORK/ibsmd.log" || fail "no link_up event"
start_named_ibsmd B host-2 0 "sweep_interval: 0" "pm_interval: 0"
wait_until 30 grep -q 'event=sm_appeared sm_guid=0x0000000000100003' "$WORK/ibsmd.log" ||
	fail "no sm_appeared event: $(grep event= "$WORK/ibsmd.log" | tail -3)"
echo "events link_down, link_up and sm_appeared, with their fields: ok"
