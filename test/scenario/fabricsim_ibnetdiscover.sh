#!/usr/bin/env bash
# ibnetdiscover (infiniband-diags) run against fabricsim through libumad2sim.so reproduces the
# input topology cable for cable, for ibsim's example, a generated fat tree and a random graph.
# Usage: fabricsim_ibnetdiscover.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need ibnetdiscover
FS="$BUILD/test/fabricsim/fabricsim"

compare() { # NETFILE|SPEC
	start_fabricsim "$1"
	umad2sim ibnetdiscover >"$WORK/discovered.net" 2>"$WORK/ibnetdiscover.log" ||
		fail "ibnetdiscover failed on $1"
	"$FS" links "$1" | sort >"$WORK/want"
	"$FS" links "$WORK/discovered.net" | sort >"$WORK/got"
	diff -u "$WORK/want" "$WORK/got" >"$WORK/diff.log" ||
		fail "ibnetdiscover saw another topology for $1: $(head -20 "$WORK/diff.log")"
	echo "$1: $(wc -l <"$WORK/want") cables reproduced"
	stop_sims
}

compare /usr/share/doc/ibsim-utils/net-examples/net
compare "fattree:radix=12,levels=2"
compare "random:switches=25,radix=10,hosts=60,seed=5"
# and a fabric written out and read back
"$FS" dump "torus:dims=3x3x3,hosts=1" >"$WORK/torus.net"
compare "$WORK/torus.net"
echo "ibnetdiscover on fabricsim: ok"
