#!/usr/bin/env bash
# OpenSM's hop_weights_file with min-hop, against OpenSM, from outside: on a two-level fat
# tree, leaf-1's port to spine-1 weighs 10 hops (one opensm.conf, one weights file with a
# comment and a line for a switch this fabric does not have):
# - OpenSM's minhop sends no LID out of that port: every other leaf's hosts go up by the
#   other three spines, and spine-1's own LID the long way (three hops at weight one each);
# - `ibsmd --import-opensm` of the same opensm.conf keeps the file (no "left out"), and
#   ibsmd's minhop then does the same: no LID out of the port, spine-1's LID by another, every
#   LID leaving leaf-1 up or down as OpenSM's does; fabricsim verify: every pair reachable;
# - without the file, ibsmd's minhop does use the port (the test sees what the weight does);
# - a weights file whose line is not GUID PORT WEIGHT is named with its line, and minhop
#   routes without weights (every pair reachable) rather than leave the fabric unrouted.
# Usage: routing_hop_weights.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
FS="$BUILD/test/fabricsim/fabricsim"
SPEC="fattree:radix=8,levels=2"
"$FS" dump "$SPEC" >"$WORK/fabric.net"
guid_of() { awk -v n="\"$1\"" '/^switchguid=/ { g = substr($1, 12) } /^Switch/ && $3 == n { print g }' "$WORK/fabric.net"; }
LEAF=$(guid_of leaf-1)
# leaf-1's port cabled to spine-1
P=$(awk '/^Switch/ { in1 = ($3 == "\"leaf-1\"") } in1 && /"spine-1"/ { sub(/^\[/, ""); sub(/\].*/, ""); print }' "$WORK/fabric.net")
[ -n "$LEAF" ] && [ -n "$P" ] || fail "leaf-1's GUID '$LEAF' or its port to spine-1 '$P'"
cat >"$WORK/hop-weights" <<W
# leaf-1's link to spine-1 is to carry nothing a shorter way can
$LEAF $P 10
0x0002c90000feed01 1 5
W
cat >"$WORK/opensm.conf" <<C
routing_engine minhop
hop_weights_file $WORK/hop-weights
force_log_flush TRUE
C
# lft NAME: leaf-1's table as "LID PORT" lines, and as "DESTINATION PORT" (the SMs give
# different LIDs)
lft() {
	"$FS" ctl lft leaf-1 | awk '!/^#/ && NF >= 2 { print $1, $2 }' | sort -n >"$WORK/$1.lft"
	"$FS" ctl lids | awk '{ print $2, $4 }' >"$WORK/$1.lids"
	awk 'NR == FNR { n[$1] = $2; next } ($1 in n) { print n[$1], $2 }' "$WORK/$1.lids" "$WORK/$1.lft" |
		sort >"$WORK/$1.byname"
}
spine_lid() { lid_of spine-1; }
via() { awk -v p="$P" '$2 == p' "$WORK/$1.lft" | wc -l; }

start_fabricsim "$SPEC"
run_opensm -F "$WORK/opensm.conf"
lft osm
S1=$(spine_lid)
[ "$(via osm)" = 0 ] || fail "OpenSM's minhop sends $(via osm) LIDs out of the weighed port $P"
o=$(awk -v l="$S1" '$1 == l { print $2 }' "$WORK/osm.lft")
[ -n "$o" ] && [ "$o" != "$P" ] || fail "OpenSM: spine-1's LID $S1 leaves leaf-1 by '$o'"
echo "OpenSM: no LID leaves leaf-1 by port $P, spine-1's LID by port $o"
stop_sims

"$BUILD/daemon/ibsmd" --import-opensm "$WORK/opensm.conf" >"$WORK/ibsmd.yaml" 2>"$WORK/import.err" ||
	fail "import: $(cat "$WORK/import.err")"
grep -q "^hop_weights_file: \"$WORK/hop-weights\"" "$WORK/ibsmd.yaml" || fail "the import lost the file: $(cat "$WORK/ibsmd.yaml")"
! grep -qi "hop_weights.*left out" "$WORK/import.err" || fail "the import: $(cat "$WORK/import.err")"
start_fabricsim "$SPEC"
ibsmd_once --config "$WORK/ibsmd.yaml" || fail "ibsmd with the weights: $(tail -3 "$WORK/ibsmd.log")"
lft ibsmd
[ "$(via ibsmd)" = 0 ] || fail "ibsmd sends $(via ibsmd) LIDs out of the weighed port $P"
i=$(awk -v l="$(spine_lid)" '$1 == l { print $2 }' "$WORK/ibsmd.lft")
[ -n "$i" ] && [ "$i" != "$P" ] || fail "ibsmd: spine-1's LID $S1 leaves leaf-1 by '$i'"
# up or down as OpenSM: the hosts' ports (1-4) alike, the rest up
updown() { awk '{ print $1, ($2 <= 4 ? $2 : "up") }' "$WORK/$1.byname"; }
diff <(updown osm) <(updown ibsmd) >"$WORK/updown.diff" || fail "leaf-1 forwards otherwise than OpenSM: $(head -5 "$WORK/updown.diff")"
grep -q "1 of 2 lines name a switch or port this fabric does not have" "$WORK/ibsmd.log" ||
	fail "the line for another fabric's switch is not counted: $(grep -i weights "$WORK/ibsmd.log")"
verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null || fail "fabricsim verify"
echo "ibsmd (imported): no LID leaves leaf-1 by port $P, spine-1's LID by port $i, up or down as OpenSM, every pair reachable"
stop_sims

# without the weights the port carries its share
start_fabricsim "$SPEC"
ibsmd_once --routing-engine minhop || fail "ibsmd without weights"
lft plain
[ "$(via plain)" -gt 0 ] || fail "without weights no LID leaves by port $P either: the test proves nothing"
echo "without the file: $(via plain) LIDs leave leaf-1 by port $P"

# a line that is not GUID PORT WEIGHT: the error names the file and line, and minhop routes
# without weights rather than leave the fabric without routes (OpenSM too routes with every
# weight 1 when it cannot parse the file)
stop_sims
start_fabricsim "$SPEC"
printf '%s %s\n' "$LEAF" "$P" >"$WORK/bad-weights"
printf 'routing_engine: "minhop"\nhop_weights_file: "%s"\n' "$WORK/bad-weights" >"$WORK/bad.yaml"
ibsmd_once --config "$WORK/bad.yaml" || fail "a bad weights file: $(tail -3 "$WORK/ibsmd.log")"
grep -q "bad-weights:1: .* has no weight 1-255 after the port .*: routing without hop weights until it is fixed" "$WORK/ibsmd.log" ||
	fail "a bad weights file: $(grep -i weight "$WORK/ibsmd.log" | head -3)"
grep -q "routed by minhop" "$WORK/ibsmd.log" || fail "not routed by minhop: $(grep routed "$WORK/ibsmd.log")"
lft bad
[ "$(via bad)" = "$(via plain)" ] || fail "with a bad file, $(via bad) LIDs by port $P, unweighted $(via plain)"
verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null || fail "fabricsim verify"
echo "a line without a weight: named (bad-weights:1), the fabric routed by minhop without weights: ok"
echo PASS
