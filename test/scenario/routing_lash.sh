#!/usr/bin/env bash
# lash (layered shortest paths) against OpenSM's lash on the same fabrics, from outside: a
# 3D torus and the irregular graph where updn once left a credit loop. OpenSM's log says
# how many virtual lanes its lash needs ("Lanes needed"); ibsmd's lash may use no more, every
# pair is reached by a shortest path, and fabricsim verify, following each path's own SL
# (ibsmd-path-sl.dump) through the SL-to-VL tables the switches hold, finds no credit loop
# and no VL a link does not run. `ibsmd --import-opensm` of `routing_engine lash` gives
# ibsmd's lash.
# Usage: routing_lash.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
FS="$BUILD/test/fabricsim/fabricsim"

printf 'routing_engine lash\n' >"$WORK/opensm.conf"
"$BUILD/daemon/ibsmd" --import-opensm "$WORK/opensm.conf" >"$WORK/import.yaml" 2>"$WORK/import.err" ||
	fail "import: $(cat "$WORK/import.err")"
grep -q '^routing_engine: "lash,minhop"$' "$WORK/import.yaml" ||
	fail "routing_engine lash imported as: $(grep routing_engine "$WORK/import.yaml")"
{
	cat "$WORK/import.yaml"
	echo "dump_dir: $WORK/dump"
	echo "dump_after_sweep: true"
} >"$WORK/lash.yaml"

compare() { # SPEC NAME
	local spec=$1 name=$2
	start_fabricsim "$spec"
	# OpenSM's lash counts the VLs the links run when it routes: on a fresh fabric (VL0
	# only) it has one and fails; a first sweep sets them, as on a running fabric
	run_opensm
	run_opensm -R lash -D 0x03
	local theirs
	theirs=$(sed -n 's/.*Lanes needed: \([0-9]*\).*/\1/p' "$WORK/opensm/opensm.log" | tail -1)
	[ -n "$theirs" ] || fail "$name: OpenSM's lash says nothing of its lanes: $(grep -i lash "$WORK/opensm/opensm.log" | tail -3)"
	stop_sims
	start_fabricsim "$spec"
	rm -rf "$WORK/dump"
	ibsmd_once --config "$WORK/lash.yaml" ||
		fail "$name: ibsmd --once with lash: $(tail -3 "$WORK/ibsmd.log")"
	grep -q "routed by lash" "$WORK/ibsmd.log" || fail "$name: not routed by lash: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
	local ours
	ours=$(sed -n 's/.*lash: .* \([0-9]*\) virtual layer(s) of .*/\1/p' "$WORK/ibsmd.log" | tail -1)
	[ -n "$ours" ] || fail "$name: ibsmd's lash says nothing of its layers"
	[ "$ours" -le "$theirs" ] || fail "$name: ibsmd's lash uses $ours VLs, OpenSM's $theirs"
	verify_sl -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'r["unicast"]["nonminimal"] == 0' \
		'not r["credit_loops"]["loop"]' 'r["vl_unrun"] == 0'
	echo "$name: ibsmd's lash $ours VL(s), OpenSM's $theirs; shortest paths, no credit loop: ok"
	stop_sims
}

compare "torus:dims=4x4x4,hosts=1" "4x4x4 torus"
compare "$(dirname "$0")/fabrics/random30-updn-loop.net" "random graph"
echo "PASS"
