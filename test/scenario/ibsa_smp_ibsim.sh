#!/usr/bin/env bash
# ibsa sends raw directed-route SMPs through the sim transport to Debian's ibsim running its
# example fabric, and what it prints matches the fabric: checked against the net file and
# against smpquery from infiniband-diags run on the same simulator through libumad2sim.so.
# Usage: ibsa_smp_ibsim.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

BUILD=$1
IBSA="$BUILD/cli/ibsa"
NET=/usr/share/doc/ibsim-utils/net-examples/net
[ -f "$NET" ] || fail "$NET missing (package ibsim-utils)"
start_ibsim "$NET"

# The SM port is the first node of the file: Switch1. Its NodeInfo, locally (empty route).
out=$("$IBSA" --transport sim smp nodeinfo --dr 0)
echo "$out" | grep -Eq '^node_type +2$' || fail "local node is not a switch: $out"
echo "$out" | grep -Eq '^num_ports +8$' || fail "Switch1 has 8 ports: $out"

# One hop out of port 1 is Hca1 (net: [1] "Hca1"[1]): a CA with 2 ports, entered on port 1.
out=$("$IBSA" --transport sim smp nodeinfo --dr 0,1)
echo "$out" | grep -Eq '^node_type +1$' || fail "0,1 is not a CA: $out"
echo "$out" | grep -Eq '^num_ports +2$' || fail "Hca1 has 2 ports: $out"
echo "$out" | grep -Eq '^local_port_num +1$' || fail "Hca1 entered on port 1: $out"
guid=$(echo "$out" | awk '$1 == "node_guid" { print $2 }')

# Port 3 leads to Switch2; its NodeDescription is its name; JSON output parses.
out=$("$IBSA" --transport sim --json smp nodedesc --dr 0,3)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["desc"]=="Switch2", d'

# The same node as smpquery (infiniband-diags over libumad2sim.so) sees it.
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
if [ -f "$SHIM" ] && command -v smpquery >/dev/null; then
	diag=$(cd "$WORK" && LD_PRELOAD=$SHIM smpquery -D nodeinfo 0,1 2>"$WORK/smpquery.log")
	dguid=$(echo "$diag" | sed -n 's/^Guid:\.*\(0x[0-9a-f]*\)/\1/p')
	[ "$((dguid))" = "$((guid))" ] || fail "smpquery NodeGuid $dguid, ibsa $guid"
else
	fail "smpquery or libumad2sim.so missing (packages infiniband-diags, ibsim-utils)"
fi

# A route that leads nowhere: exit code 4 (no answer) and a message, quickly.
set +e
"$IBSA" --transport sim --timeout 100 --retries 1 smp nodeinfo --dr 0,7 2>"$WORK/err.log"
rc=$?
set -e
[ "$rc" = 4 ] || fail "unreachable route gave exit code $rc, expected 4"
grep -q "no answer" "$WORK/err.log" || fail "no message for an unreachable route"

# Bad input: a malformed route is a usage error, not a crash.
set +e
"$IBSA" --transport sim smp nodeinfo --dr 0,x 2>"$WORK/err.log"
rc=$?
set -e
[ "$rc" = 2 ] || fail "malformed route gave exit code $rc, expected 2"

# No simulator: a clear transport error.
set +e
IBSIM_SOCKNAME=nobody-here-$$ "$IBSA" --transport sim smp nodeinfo 2>"$WORK/err.log"
rc=$?
set -e
[ "$rc" = 3 ] || fail "missing simulator gave exit code $rc, expected 3"
grep -q "no simulator" "$WORK/err.log" || fail "unclear message without a simulator"

echo "ibsa smp against ibsim: ok"
