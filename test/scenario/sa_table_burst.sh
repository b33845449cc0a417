#!/usr/bin/env bash
# Whole-fabric tables do not stop the SA: 20 PathRecord GetTables with component mask 0
# (every pair of a 648-host fabric, about 490,000 paths each) sent at once, then one
# NodeRecord Get. Before, each table was built whole inside the event loop (0.3-0.44 s
# each here, seconds under ASan) and the BUSY test came only after building: the Get was
# answered after all 20 tables, 3 s late. Now load is checked before building (beyond 4
# tables under way: BUSY at once), tables are built a slice per turn of the loop, and the
# Get is answered before any table is done. The tables that were taken still arrive whole.
# Usage: sa_table_burst.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=36,levels=2" # 648 hosts
SIM_HOST=host-648 start_ibsmd --sweep-interval 0
SIM_HOST=host-2 "$BUILD/test/sa_probe" --path-burst 20 >"$WORK/burst.out" 2>"$WORK/probe.log" ||
	fail "sa_probe --path-burst: $(cat "$WORK/probe.log")"
read -r _ tables busy lost before get <"$WORK/burst.out"
echo "20 whole-fabric PathRecord tables: $tables built, $busy BUSY, $lost unanswered; $before built before the Get's answer ($get)"
[ "$get" = 0x0000 ] || fail "the Get got status $get"
[ "$before" = 0 ] || fail "the Get waited for $before whole-fabric tables"
[ "$lost" = 0 ] || fail "$lost requests unanswered"
[ "$tables" -ge 1 ] && [ "$busy" -ge 1 ] || fail "want some tables built and the rest BUSY"
# a table built a slice at a time is the same as one built at once: a client that takes it
# whole (ibsa, acknowledging every segment) gets every pair, once the burst's transfers that
# nobody acknowledges have been given up (until then the SA holds their bytes: BUSY)
whole_table() {
	SIM_HOST=host-1 "$BUILD/cli/ibsa" --transport sim --sm-key 1 --timeout 30000 paths all all \
		>"$WORK/all.txt" 2>"$WORK/all.err"
}
wait_until 120 whole_table || fail "ibsa paths all all: $(cat "$WORK/all.err")"
n=$(grep -c "^path" "$WORK/all.txt" || true)
[ "$n" = $((702 * 702)) ] || fail "the whole table has $n paths, want $((702 * 702)) (702 endpoints): $(head -3 "$WORK/all.txt")"
echo "the whole table, built a slice at a time: $n paths: ok"
kill -0 "$IBSMD_PID" || fail "ibsmd died"
echo "SA table burst: ok"
