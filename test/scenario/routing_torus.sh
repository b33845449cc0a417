#!/usr/bin/env bash
# dor and torus, dimension-order routing on meshes and tori found in the cabling, checked
# from outside:
# - a 6x6x6 torus: every pair by a shortest path; fabricsim verify following each path's SL
#   (one dateline bit per dimension, ibsmd-path-sl.dump) through the switches' tables: no
#   credit loop, while the same tables on SL 0 alone loop (the datelines are needed); the
#   tables read back with smpquery switch VL1 to VL0 at the dateline and only there;
# - a 4x4x4 mesh: one SL, no loop;
# - a failed link: torus routes around it, free of credit loops; dor refuses naming it;
# - a failed switch: torus routes round it, every pair shortest and free of credit loops,
#   the hops after a turn round it on VLs of their own (2-3); at LMC 2 the alternates on
#   VLs 4-7, every host switch with one apart from its primary; two failed in a row along the
#   last dimension likewise; failed switches elsewhere besides: torus says why it cannot, and
#   the chain "torus,nue" routes with nue;
# - a QoS level stacked on the dateline SLs of an 8x8 torus: its paths on SL 4 + bits, VLs
#   2-3, verified; at LMC 2 with routing_max_vls 4 the alternates' 2 up/down orders on SLs
#   4-5 and the QoS level on SL 6 + the path's, verified.
# Usage: routing_torus.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need smpquery
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"

once() { # ENGINE [YAML LINE...]: one sweep, dump files in $WORK/dump
	local l
	{
		echo "routing_engine: \"$1\""
		shift
		echo "dump_dir: $WORK/dump"
		echo "dump_after_sweep: true"
		for l in "$@"; do echo "$l"; done
	} >"$WORK/once.yaml"
	rm -rf "$WORK/dump"
	ibsmd_once --config "$WORK/once.yaml" || fail "ibsmd --once: $(grep -E 'routing|failed' "$WORK/ibsmd.log" | tail -3)"
}

clean='r["unicast"]["unreachable"] == 0'
noloop='not r["credit_loops"]["loop"]'

echo "== torus and dor on a 6x6x6 torus"
start_fabricsim "torus:dims=6x6x6,hosts=2"
for e in dor torus; do
	once "$e"
	grep -q "routed by $e" "$WORK/ibsmd.log" || fail "not routed by $e: $(grep routing "$WORK/ibsmd.log" | tail -2)"
	verify_sl -- "$clean" "$noloop" 'r["unicast"]["nonminimal"] == 0' 'r["vl_unrun"] == 0' 'r["sls_used"] == 0xff'
done
"$FS" verify --json >"$WORK/flat.json" || true
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["credit_loops"]["loop"] else 1)' "$WORK/flat.json" ||
	fail "on SL 0 alone the same tables have no loop: the datelines were not needed"
echo "  on SL 0 alone the same tables loop: the datelines are needed"
# x: ports 3 (minus) and 4 (plus); position 3 of 6 is before the dateline going plus, 5
# sends plus across it, 1 is past it
lid() { "$FS" ctl lids | awk -v n="$1" '$4 == n { print $2 }'; }
row() { on_sim host-1 smpquery sl2vl "$(lid "$1")" "$2" | grep "in  1, out  $2:" | tr -d ' '; }
[ "$(row sw-3-0-0 4)" = "ports:in1,out4:|0|1|0|1|0|1|0|1|2|3|2|3|2|3|2|3|" ] ||
	fail "sw-3-0-0 plus x: $(row sw-3-0-0 4), want crossing SLs (odd) on VL1"
[ "$(row sw-5-0-0 4)" = "ports:in1,out4:|0|0|0|0|0|0|0|0|2|2|2|2|2|2|2|2|" ] ||
	fail "sw-5-0-0 over the dateline: $(row sw-5-0-0 4), want VL0"
[ "$(row sw-1-0-0 4)" = "ports:in1,out4:|0|0|0|0|0|0|0|0|2|2|2|2|2|2|2|2|" ] ||
	fail "sw-1-0-0 plus x, past the dateline: $(row sw-1-0-0 4), want VL0"
[ "$(row sw-1-0-0 3)" = "ports:in1,out3:|0|1|0|1|0|1|0|1|2|3|2|3|2|3|2|3|" ] ||
	fail "sw-1-0-0 minus x, before the dateline: $(row sw-1-0-0 3), want crossing SLs on VL1"
echo "  smpquery: crossing SLs on VL1 before the dateline, VL0 over it and after"
stop_sims

echo "== dor on a 4x4x4 mesh"
start_fabricsim "mesh:dims=4x4x4,hosts=2"
once dor
verify_sl -- "$clean" "$noloop" 'r["unicast"]["nonminimal"] == 0' 'r["sls_used"] == 1'
stop_sims

echo "== a failed link"
start_fabricsim "torus:dims=5x4x3,hosts=1,missing-links=1,seed=3"
once "dor,torus"
grep -q "routed by torus" "$WORK/ibsmd.log" || fail "torus did not route: $(grep routing "$WORK/ibsmd.log" | tail -2)"
grep -q 'routing engine dor failed: dor: switch "sw-0-1-2" has no link in dimension 1 (port 5): the grid has a gap' "$WORK/ibsmd.log" ||
	fail "dor's refusal does not name the gap: $(grep 'dor failed' "$WORK/ibsmd.log")"
verify_sl -- "$clean" "$noloop" 'r["vl_unrun"] == 0'
echo "  dor refused naming the gap; torus routes around it"
stop_sims

echo "== a failed switch"
# the SM on host-1 at sw-0-0-0: the failed switches are chosen away from it
start_fabricsim "torus:dims=6x6x6,hosts=2"
fabricsim_ctl node remove sw-3-2-4 >/dev/null
once torus
grep -q "routed by torus" "$WORK/ibsmd.log" || fail "torus did not route round one switch: $(grep -E 'routing|failed' "$WORK/ibsmd.log" | tail -2)"
grep -q "paths step round the missing switches" "$WORK/ibsmd.log" || fail "torus does not say it steps round"
# every pair, no credit loop on the path SLs through per-input SL-to-VL tables; the hops
# after a turn round the switch ride VLs 2-3 (paths along the switch's own rings go the
# other way round: not all shortest)
verify_sl -- "$clean" "$noloop" 'r["vl_unrun"] == 0' 'r["vls_used"] & 0xc'
echo "  routed round sw-3-2-4, no credit loop, turn hops on VLs 2-3"
# LMC 2 round the same hole: the later LIDs by up/down orders on the 4 VLs the dimension
# order leaves (4-7), every host switch with an alternate apart, still no credit loop
once torus "lmc: 2" "log_level: info"
grep -q "torus: LMC alternates by 4 up/down order(s), on SLs 8-11" "$WORK/ibsmd.log" ||
	fail "no alternates round the hole: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
verify_sl -- "$clean" "$noloop" 'r["vl_unrun"] == 0' 'r["vls_used"] & 0xf0' \
	'r["apm"]["link_disjoint_pct"] == 100'
# beside the hole a turn (in along y, out along x minus) keeps the dimension order's upper
# VLs (2-3), below the orders' (a turn on VL 4 shared it with the first order)
turn=$(on_sim host-1 smpquery sl2vl "$(lid sw-2-3-4)" 3 | grep "in  5, out  3:" | tr -d ' ')
[ "$turn" = "ports:in5,out3:|2|3|2|3|2|3|2|3|4|5|6|7|2|3|2|3|" ] ||
	fail "sw-2-3-4 turn row at LMC 2: $turn, want turns on VLs 2-3 and the orders on 4-7"
echo "  LMC 2 round it: alternates on VLs 4-7, every host switch's apart, no credit loop"
stop_sims

echo "== two failed switches in a row along z, and two apart"
start_fabricsim "torus:dims=6x6x6,hosts=2"
fabricsim_ctl node remove sw-3-2-3 >/dev/null
fabricsim_ctl node remove sw-3-2-4 >/dev/null
once torus
grep -q "routed by torus" "$WORK/ibsmd.log" || fail "torus did not route round two switches in a row: $(grep -E 'routing|failed' "$WORK/ibsmd.log" | tail -2)"
verify_sl -- "$clean" "$noloop" 'r["vl_unrun"] == 0'
fabricsim_ctl node remove sw-1-4-1 >/dev/null
once "torus,nue"
grep -q "routed by nue" "$WORK/ibsmd.log" || fail "nue did not take over: $(grep routing "$WORK/ibsmd.log" | tail -2)"
grep -q 'routing engine torus failed: torus: 3 switches missing (at .* and .* among them): routing round them is free of credit loops for one, or several in a row along the last dimension' "$WORK/ibsmd.log" ||
	fail "torus's refusal does not say why: $(grep 'torus failed' "$WORK/ibsmd.log")"
verify_sl -- "$clean" "$noloop" 'r["vl_unrun"] == 0'
echo "  two in a row along z: routed by torus; one more elsewhere: refused with the reason, nue routes"
stop_sims

echo "== a QoS level stacked on the dateline SLs (8x8 torus)"
start_fabricsim "torus:dims=8x8,hosts=2"
cat >"$WORK/ibsmd.yaml" <<EOF
routing_engine: torus
sweep_interval: 0
log_level: info
dump_dir: $WORK/dump
dump_after_sweep: true
qos:
  levels:
    - name: storage
      sl: 1
  rules:
    - service_id: 0x1000000000000001-0x10000000000000ff
      level: storage
EOF
rm -f "$WORK/dump/ibsmd-path-sl.dump" # an earlier run's must not pass for this one's
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
grep -q "torus: 4 layers, QoS SLs stacked on them" "$WORK/ibsmd.log" || fail "no stacking: $(grep routing "$WORK/ibsmd.log" | tail -3)"
wait_until 20 test -s "$WORK/dump/ibsmd-path-sl.dump" || fail "no path SL dump"
l1=$(lid host-3) l2=$(lid host-100)
sl() { SIM_HOST=host-1 "$IBSA" --transport sim --json paths "$l1" "$l2" "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sl"])'; }
plain=$(sl) storage=$(sl --sid 0x1000000000000005)
[ "$storage" = $((plain + 4)) ] || fail "storage path SL $storage, want $((plain + 4)) (the path's $plain + 4)"
verify_sl --sl 4 -- "$clean" "$noloop" 'r["vl_unrun"] == 0' 'r["sls_used"] == 0xf0'
echo "  storage PathRecords on SL 4 + dateline bits ($storage for $plain), verified"
stop_pids "$IBSMD_PID"

# at LMC 2 the alternates' up/down orders go on top of the dateline SLs and VLs; with
# routing_max_vls 4 they take VLs 2-3 (2 orders, SLs 4-5), and the QoS class stacks on the
# 6 layers: SL 6 + the path's (6-11), free of credit loops too
sed -i 's/^sweep_interval: 0$/sweep_interval: 0\nlmc: 2\nrouting_max_vls: 4/' "$WORK/ibsmd.yaml"
rm -f "$WORK/dump/ibsmd-path-sl.dump"
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
grep -q "torus: LMC alternates by 2 up/down order(s), on SLs 4-5" "$WORK/ibsmd.log" ||
	fail "no alternates within routing_max_vls 4: $(grep routing "$WORK/ibsmd.log" | tail -3)"
grep -q "torus: 6 layers, QoS SLs stacked on them" "$WORK/ibsmd.log" || fail "no stacking on 6 layers"
wait_until 20 test -s "$WORK/dump/ibsmd-path-sl.dump" || fail "no path SL dump"
l1=$(lid host-3) l2=$(lid host-100)
plain=$(sl) storage=$(sl --sid 0x1000000000000005)
[ "$storage" = $((plain + 6)) ] || fail "LMC 2: storage path SL $storage, want $((plain + 6))"
verify_sl -- "$clean" "$noloop" 'r["apm"]["link_disjoint_pct"] >= 99'
verify_sl --sl 6 -- "$clean" "$noloop" 'r["sls_used"] == 0xfc0'
echo "  LMC 2 with routing_max_vls 4: alternates on SLs 4-5, storage on SL 6 + the path's ($storage), verified"
echo "routing torus: ok"
