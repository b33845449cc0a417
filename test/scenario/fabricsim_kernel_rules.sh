#!/usr/bin/env bash
# The kernel's MAD rules on libfabricsim-umad.so, the stand-in for the kernel in every umad
# test: test/tools/umad_rules.c checks each rule through libibumad, one Check test a rule
# (answers only to requests sent with a timeout, ETIMEDOUT returns, TIDs still waiting
# refused, late and stray answers freed, registration checks and one holder per method,
# sizes, kernel and user RMPP, unregistered Gets answered, issm held by one), then the same
# port laid out as a ConnectX-8 SMI/GSI pair. ibsmd serves as SM and SA through
# --transport umad under the same rules, and its own tables are verified.
# Usage: fabricsim_kernel_rules.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
export FABRICSIM="$FS"
on_kernel host-1 "$BUILD/daemon/ibsmd" --transport umad --state-dir "$WORK/state" \
	--sweep-interval 0 >"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log" &
PIDS+=($!)
wait_until 60 grep -q "subnet up" "$WORK/ibsmd.log" || fail "ibsmd on umad did not bring the subnet up"
verify_passes || fail "ibsmd on umad left the subnet unverified: $("$FS" verify | tail -2)"
echo "ibsmd through --transport umad, under the kernel's rules: subnet up, verify PASS"

STRAY_NODE=host-2 on_kernel host-3 "$BUILD/test/umad_rules" >"$WORK/rules.log" 2>&1 ||
	fail "the emulation breaks a kernel rule: $(grep -v ':P:' "$WORK/rules.log" | tail -15)"
grep -E '^[0-9]+%: Checks' "$WORK/rules.log"
FABRICSIM_UMAD_SMI=1 on_kernel host-4 "$BUILD/test/umad_rules" pair >"$WORK/pair.log" 2>&1 ||
	fail "the SMI/GSI pair: $(tail -5 "$WORK/pair.log")"
grep -E '^[0-9]+%: Checks' "$WORK/pair.log"
echo PASS
