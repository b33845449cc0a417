#!/usr/bin/env bash
# LIDs are stable across SM restarts: from the guid2lid state file when the fabric was reset
# too, from the fabric when the state file is gone; LIDs found on the fabric that conflict or
# fall outside the configured range are reassigned.
# Usage: ibsmd_restart.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
SPEC="fattree:radix=8,levels=2" # 32 hosts, 12 switches
lids() { "$FS" ctl lids | sort; }

start_fabricsim "$SPEC"
ibsmd_once || fail "first run: $(cat "$WORK/ibsmd.out")"
lids >"$WORK/lids.0"
[ "$(wc -l <"$WORK/lids.0")" = 44 ] || fail "expected 44 endpoints"
[ -f "$WORK/state/guid2lid" ] || fail "no guid2lid state file"
[ -z "$(find "$WORK/state" -name '*.tmp*')" ] || fail "a temporary file was left behind"
grep -c '^0x' "$WORK/state/guid2lid" | has -x 44 || fail "state file does not hold 44 LIDs"

# 1. the SM restarts on a fabric that was reset as well: LIDs come from the state file
stop_sims
start_fabricsim "$SPEC"
# a different discovery order must not matter: start from another node
SIM_HOST=host-20 ibsmd_once || fail "second run"
lids >"$WORK/lids.1"
diff -u "$WORK/lids.0" "$WORK/lids.1" || fail "LIDs changed across a restart with the state file"
echo "restart with state file: every LID kept"

# 2. the state file is lost, the fabric kept its LIDs: they are taken from the fabric
rm -rf "$WORK/state"
SIM_HOST=host-9 ibsmd_once || fail "third run"
lids >"$WORK/lids.2"
diff -u "$WORK/lids.0" "$WORK/lids.2" || fail "LIDs changed when read back from the fabric"
echo "restart without state file: every LID kept from the fabric"

# 3. conflicting and out-of-range LIDs left on the fabric are reassigned
rm -rf "$WORK/state"
dup=$(awk '$4 == "host-1" { print $2 }' "$WORK/lids.0")
"$FS" ctl lid host-2 1 "$dup" >/dev/null
"$FS" ctl lid host-3 1 900 >/dev/null      # beyond lid_max below
"$FS" ctl lid host-4 1 33 2 >/dev/null     # LMC 2 block not aligned
printf 'lid_max: 200\n' >"$WORK/small.yaml"
ibsmd_once --config "$WORK/small.yaml" || fail "run with conflicts: $(cat "$WORK/ibsmd.out")"
check_verify 'r["ok"]' 'r["lids"]["duplicate"] == 0 and r["lids"]["misaligned"] == 0'
lids | awk '$2 > 200 || $2 == 0 { print "bad LID", $0; bad = 1 } END { exit bad }' ||
	fail "a LID outside 1-200 survived"
grep -q "held LID" "$WORK/ibsmd.log" || fail "no message about the reassigned LID"
echo "conflicting, misaligned and out-of-range LIDs reassigned"

# 4. a range too small for the fabric: --once says so and exits non-zero
rm -rf "$WORK/state"
printf 'lid_max: 20\n' >"$WORK/tiny.yaml"
if ibsmd_once --config "$WORK/tiny.yaml"; then
	fail "a LID range of 20 for 44 ports succeeded"
fi
grep -q "LID range" "$WORK/ibsmd.out" || fail "no reason given: $(cat "$WORK/ibsmd.out")"
grep -q "widen lid_min/lid_max" "$WORK/ibsmd.log" || fail "no advice in the log"
echo "too small a LID range: refused with the reason"
echo "LID stability: ok"
