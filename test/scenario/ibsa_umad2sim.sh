#!/usr/bin/env bash
# The umad transport, unchanged, under Debian's libumad2sim.so (the way OpenSM runs on ibsim):
# agent registration falls back to umad_register, MADs come through the reader thread.
# Usage: ibsa_umad2sim.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$1/cli/ibsa"
start_ibsim /usr/share/doc/ibsim-utils/net-examples/net

out=$(umad2sim "$IBSA" --transport umad smp nodeinfo --dr 0,3 2>"$WORK/ibsa.log")
echo "$out" | grep -Eq '^node_guid +0x0000000000200001$' || fail "Switch2 via umad: $out"
out=$(umad2sim "$IBSA" --transport umad smp nodedesc --dr 0,2 2>>"$WORK/ibsa.log")
echo "$out" | has '"Hca2"' || fail "Hca2 via umad: $out"
# the port was chosen without --ca/--port: the simulated CA's switch port 0
out=$(umad2sim "$IBSA" -v -v --transport umad smp portinfo --dr 0 2>&1)
echo "$out" | has "umad ibsim0 port 0" || fail "port not reported: $out"
echo "ibsa over umad under libumad2sim.so: ok"
