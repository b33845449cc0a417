#!/usr/bin/env bash
# The kernel's MAD rules on libfabricsim-umad.so, the stand-in for the kernel in every umad
# test: test/tools/umad_rules.c checks each rule through libibumad, one Check test a rule
# (answers only to requests sent with a timeout, ETIMEDOUT returns, TIDs still waiting
# refused, late and stray answers freed, a process exiting while answers arrive, registration
# checks and one holder per method, sizes, kernel and user RMPP, unregistered Gets answered, issm held by one), then the same
# port laid out as a ConnectX-8 SMI/GSI pair. ibsmd serves as SM and SA through
# --transport umad under the same rules, and its own tables are verified: started while
# another process holds the port's issm device it says so and waits (it used to block in
# open() without a word), and on an SMI/GSI pair it brings a fabric up with SMPs through the
# SMI device and ibsa's queries answer through both.
# Usage: fabricsim_kernel_rules.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
export FABRICSIM="$FS"
# another holder of host-1's issm device (any program can open it), until the test has seen
# ibsmd wait for it and lets it go (at most 120 s)
(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD exec python3 -c 'import os, sys, time
fd = os.open("/dev/infiniband/issm0", os.O_RDWR)
print("held", flush=True)
end = time.time() + 120
while not os.path.exists(sys.argv[1]) and time.time() < end:
    time.sleep(0.05)' "$WORK/release-issm" >"$WORK/holder.out" 2>&1) &
HOLDER=$!
CLIENTS+=($HOLDER)
wait_until 10 grep -q held "$WORK/holder.out" || fail "the issm holder: $(cat "$WORK/holder.out")"
IBSMD_BIN="$BUILD/daemon/ibsmd"
(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$(kernel_preload "$IBSMD_BIN") exec "$IBSMD_BIN" \
	--transport umad --state-dir "$WORK/state" --sweep-interval 0 >"$WORK/ibsmd.out" \
	2>"$WORK/ibsmd.log") &
IBSMD=$!
PIDS+=($IBSMD)
wait_until 10 grep -q "another SM holds this port's issm device" "$WORK/ibsmd.log" ||
	fail "ibsmd said nothing while another process held the issm device"
grep -q "subnet up" "$WORK/ibsmd.log" && fail "ibsmd swept while another SM held the port"
touch "$WORK/release-issm"
wait "$HOLDER" || true
wait_until 60 grep -q "subnet up" "$WORK/ibsmd.log" || fail "ibsmd on umad did not bring the subnet up"
grep -q "the issm device is this SM's now" "$WORK/ibsmd.log" || fail "ibsmd did not say it got the issm device"
verify_passes || fail "ibsmd on umad left the subnet unverified: $("$FS" verify | tail -2)"
echo "ibsmd through --transport umad, under the kernel's rules: waited for the issm device, subnet up, verify PASS"

STRAY_NODE=host-2 on_kernel host-3 "$BUILD/test/umad_rules" >"$WORK/rules.log" 2>&1 ||
	fail "the emulation breaks a kernel rule: $(grep -v ':P:' "$WORK/rules.log" | tail -15)"
grep -E '^[0-9]+%: Checks' "$WORK/rules.log"
FABRICSIM_UMAD_SMI=1 on_kernel host-4 "$BUILD/test/umad_rules" pair >"$WORK/pair.log" 2>&1 ||
	fail "the SMI/GSI pair: $(tail -5 "$WORK/pair.log")"
grep -E '^[0-9]+%: Checks' "$WORK/pair.log"

# a fabric brought up through an SMI/GSI pair, and ibsa through one
stop_pids "$IBSMD"
stop_sims
start_fabricsim "fattree:radix=8,levels=2" --max-clients 40
export FABRICSIM_UMAD_SMI=1
on_kernel host-1 "$BUILD/daemon/ibsmd" --transport umad --once --state-dir "$WORK/state-pair" \
	>"$WORK/pair-once.out" 2>"$WORK/pair-once.log" ||
	fail "ibsmd --once on an SMI/GSI pair: $(tail -3 "$WORK/pair-once.log")"
grep -q "has its QP0 on an SMI device of its own" "$WORK/pair-once.log" ||
	fail "ibsmd did not find the SMI device: $(head -3 "$WORK/pair-once.log")"
verify_passes || fail "brought up through the pair, not verified: $("$FS" verify | tail -2)"
(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$(kernel_preload "$IBSMD_BIN") exec "$IBSMD_BIN" \
	--transport umad --state-dir "$WORK/state-pair" --sweep-interval 0 >"$WORK/pair.out" \
	2>"$WORK/pair-daemon.log") &
PIDS+=($!)
wait_until 60 grep -q "subnet up" "$WORK/pair-daemon.log" || fail "ibsmd as a daemon on the pair"
on_kernel host-5 "$BUILD/cli/ibsa" --transport umad smp nodeinfo --dr 0,1 >"$WORK/pair-smp.txt" 2>&1 ||
	fail "ibsa smp through the pair: $(cat "$WORK/pair-smp.txt")"
grep -Eq "^node_type +2$" "$WORK/pair-smp.txt" || fail "ibsa smp through the pair: $(cat "$WORK/pair-smp.txt")"
on_kernel host-5 "$BUILD/cli/ibsa" --transport umad nodes >"$WORK/pair-nodes.txt" 2>&1 ||
	fail "ibsa nodes through the pair: $(tail -3 "$WORK/pair-nodes.txt")"
[ "$(grep -c "host-" "$WORK/pair-nodes.txt")" -ge 32 ] || fail "ibsa nodes through the pair: $(head -5 "$WORK/pair-nodes.txt")"
unset FABRICSIM_UMAD_SMI
echo "an SMI/GSI pair: ibsmd --once and as a daemon verify PASS, ibsa smp and SA queries answer"
echo PASS
