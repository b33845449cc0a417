#!/usr/bin/env bash
# One host cannot take the SA's room for tables, nor its memory, from the others.
# host-2 sends four whole-fabric PathRecord GetTables at once (2,000 hosts: 6.3 million
# pairs each) and acknowledges nothing:
# - it gets one built, the other three BUSY (one table a slice at a time per port; before,
#   its four took all four places and every other host's table was BUSY);
# - meanwhile host-3's table of its own paths is answered, not BUSY;
# - the whole-fabric table stops at what one transfer carries and is answered NO_RESOURCES
#   (before, each was built whole, 400 MB, and only then refused);
# - a NodeRecord Get from another host is answered meanwhile.
# And host-6 asks 20 NodeRecord tables at once, acknowledging none: 16 are sent, 4 refused
# NO_RESOURCES with a warning naming host-6's port (before, all 20: one host could hold all
# 256 transfers the SA allows at once).
# Usage: sa_quota_tables.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

# ASan keeps freed memory in quarantine (256 MB by default), which would count in the peak
# measured below: a small one keeps the figure the daemon's own
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
start_fabricsim "fattree:radix=20,levels=3" --max-clients 16 # 2,000 hosts
IBSMD_UP_TIMEOUT=120 SIM_HOST=host-2000 start_ibsmd --sweep-interval 0
probe() { (cd "$WORK" && SIM_HOST=$1 "$BUILD/test/sa_probe" "${@:2}"); }
hwm() { awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$IBSMD_PID/status"; }
before=$(hwm)
probe host-2 --path-burst 4 >"$WORK/burst.out" 2>"$WORK/burst.err" &
BURST=$!
PIDS+=($BURST)
# the burst's tables are in: three of them answered BUSY, the fourth being built (a job takes
# seconds)
busy_is_3() { [ "$(status_field 's["sa"]["busy"]')" -ge 3 ]; }
wait_until 10 busy_is_3 || fail "host-2's tables not in: $(status_field 's["sa"]')"
out=$(probe host-3 --path-table own) || fail "host-3's table: $out"
[ "$out" = "table 0x0000" ] || fail "host-3's own table while host-2's tables are built: $out, want 0x0000"
echo "host-3's own paths answered while host-2's whole-fabric tables are built"
SIM_HOST=host-4 "$BUILD/cli/ibsa" --transport sim nodes >/dev/null 2>"$WORK/nodes.err" ||
	fail "a NodeRecord query from host-4 meanwhile: $(cat "$WORK/nodes.err")"
wait "$BURST" || fail "sa_probe --path-burst: $(cat "$WORK/burst.err")"
read -r _ tables busy lost _ get <"$WORK/burst.out"
echo "host-2's 4 whole-fabric tables: $tables answered, $busy BUSY, $lost unanswered; its Get $get"
[ "$tables/$busy/$lost" = 1/3/0 ] || fail "want 1 answered and 3 BUSY, got $tables/$busy/$lost"
[ "$get" = 0x0000 ] || fail "host-2's Get got $get"
out=$(probe host-5 --path-table all) || fail "host-5's whole-fabric table: $out"
[ "$out" = "table 0x0100" ] || fail "a whole-fabric table of 6.3 million paths: $out, want NO_RESOURCES (0x0100)"
after=$(hwm)
echo "ibsmd's peak memory: $before MB before, $after MB after"
# (a release build: about 140 MB; the old code built 400 MB or more per table)
[ $((after - before)) -lt 300 ] ||
	fail "the table took $((after - before)) MB (one transfer's worth is 64 MB)"
read -r _ answered refused lost < <(probe host-6 --node-burst 20)
echo "host-6's 20 NodeRecord tables, unacknowledged: $answered sent, $refused refused, $lost unanswered"
[ "$answered/$refused/$lost" = 16/4/0 ] || fail "want 16 sent and 4 refused, got $answered/$refused/$lost"
grep -q "LID $(lid_of host-6) (port GUID 0x[0-9a-f]*) has 16 table transfers under way.*NO_RESOURCES" "$WORK/ibsmd.log" ||
	fail "no warning naming host-6's port: $(grep -i transfers "$WORK/ibsmd.log" | tail -3)"
SIM_HOST=host-7 "$BUILD/cli/ibsa" --transport sim nodes >/dev/null 2>"$WORK/nodes.err" ||
	fail "host-7's NodeRecords while host-6's transfers are held: $(cat "$WORK/nodes.err")"
kill -0 "$IBSMD_PID" || fail "ibsmd died"
echo PASS
