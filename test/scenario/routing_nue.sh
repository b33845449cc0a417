#!/usr/bin/env bash
# nue, the topology-agnostic engine that stays within a budget of VLs, checked from outside
# with fabricsim verify following each path's SL (ibsmd-path-sl.dump):
# - a 6x6x6 torus, where dfsssp's shortest paths need more than the 8 VLs the links run:
#   "dfsssp,nue" says why dfsssp cannot, and nue routes every pair with no credit loop in
#   at most 8 layers; then routing_max_vls: 1 (a reload): one VL, still no credit loop;
# - a dragonfly and the irregular random30 fabric with 2 VLs: every pair, no credit loop,
#   at most 2 layers; the SA's PathRecords carry the dump's SLs;
# - LMC 2 on two random graphs where nue's trees took every layer: laid compact, 95% or
#   more of the pairs no bridge parts have a link-disjoint alternate, no credit loop.
# Usage: routing_nue.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"

config() { # ENGINE [YAML LINE...]
	local l
	{
		echo "routing_engine: \"$1\""
		shift
		echo "sweep_interval: 0"
		echo "dump_dir: $WORK/dump"
		echo "dump_after_sweep: true"
		for l in "$@"; do echo "$l"; done
	} >"$WORK/ibsmd.yaml"
}

layers() { sed -n 's/.*nue: .* \([0-9]*\) virtual layer(s) of \([0-9]*\).*/\1 \2/p' "$WORK/ibsmd.log" | tail -1; }

verify_nue() { # MAX-LAYERS: verify following the dumped SLs, on at most that many VLs
	verify_sl -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' \
		'r["vl_unrun"] == 0' "bin(r['vls_used']).count('1') <= $1"
}

new_dump() { # wait for the dump of the routing the log's last line announced
	wait_until 30 test "$WORK/dump/ibsmd-path-sl.dump" -nt "$WORK/ibsmd.yaml" || fail "no new path SL dump"
}

echo "== a 6x6x6 torus: dfsssp needs more VLs than the links run, nue routes"
start_fabricsim "torus:dims=6x6x6,hosts=2"
config "dfsssp,nue" "log_level: info"
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
grep -q "routed by nue" "$WORK/ibsmd.log" || fail "not routed by nue: $(grep routing "$WORK/ibsmd.log" | tail -3)"
grep -q "routing engine dfsssp failed: dfsssp: the shortest paths need more than 8 virtual layers" "$WORK/ibsmd.log" ||
	fail "dfsssp's failure does not say why: $(grep 'dfsssp' "$WORK/ibsmd.log" | tail -2)"
read -r used budget < <(layers)
[ "$budget" = 8 ] && [ "$used" -le 8 ] || fail "nue: $used layers of $budget"
new_dump
verify_nue 8
echo "  dfsssp refused with the reason; nue: $used layers of 8"

echo "== routing_max_vls: 1 (a reload)"
config "dfsssp,nue" "log_level: info" "routing_max_vls: 1"
kill -HUP "$IBSMD_PID"
wait_until 30 grep -q "nue: .* 1 virtual layer(s) of 1" "$WORK/ibsmd.log" || fail "no one-VL routing: $(grep 'nue:' "$WORK/ibsmd.log" | tail -1)"
new_dump
verify_nue 1
grep 'nue:' "$WORK/ibsmd.log" | tail -1 | sed 's/.*nue: /  one VL: /'
stop_sims

for spec in "dragonfly:groups=9,routers=4,hosts=4,global=2" "$(dirname "$0")/fabrics/random30-updn-loop.net"; do
	echo "== nue with 2 VLs on $(basename "$spec")"
	start_fabricsim "$spec"
	config nue "log_level: info" "routing_max_vls: 2"
	sm=$("$FS" ctl lids | awk '$4 !~ /^(sw|df|r[0-9])/ && !sm { sm = $4 } END { print sm }')
	SIM_HOST=$sm start_ibsmd --config "$WORK/ibsmd.yaml"
	grep -q "routed by nue" "$WORK/ibsmd.log" || fail "not routed by nue: $(grep routing "$WORK/ibsmd.log" | tail -3)"
	new_dump
	verify_nue 2
	# the SA gives the dump's SLs
	"$FS" ctl lids | awk '$4 !~ /^(sw|df|r[0-9])/ { print $2 }' >"$WORK/hostlids"
	n=0
	while read -r s d; do
		got=$(SIM_HOST=$sm "$IBSA" --transport sim --json paths "$s" "$d" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sl"])')
		[ "$got" = "$(sl_of "$s" "$d")" ] || fail "PathRecord $s -> $d: SL $got, the dump $(sl_of "$s" "$d")"
		n=$((n + 1))
	done < <(awk 'NR % 11 == 1 { a[++n] = $1 } END { for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) if (i != j) print a[i], a[j] }' "$WORK/hostlids" | head -40)
	echo "  $n PathRecords carry the dump's SLs; $(grep 'nue:' "$WORK/ibsmd.log" | tail -1 | sed 's/.*nue: //')"
	stop_sims
done
# LMC 2 on random graphs whose shortest trees took the layers the alternates' up/down
# orders need: 89.8% and 88.7% of the pairs no bridge parts had an alternate apart before
# nue laid its trees compact for them (at a few percent more hops on the primary routes)
for spec in "random:switches=40,radix=16,hosts=160,seed=21" "random:switches=60,radix=16,hosts=240,seed=26"; do
	echo "== nue at LMC 2 on $spec"
	start_fabricsim "$spec"
	config nue "log_level: info" "lmc: 2"
	start_ibsmd --config "$WORK/ibsmd.yaml"
	grep -q "routed by nue" "$WORK/ibsmd.log" || fail "not routed by nue: $(grep routing "$WORK/ibsmd.log" | tail -3)"
	grep -q "nue: trees laid compact for the LMC alternates" "$WORK/ibsmd.log" ||
		fail "nue kept its shortest trees: $(grep 'nue:' "$WORK/ibsmd.log" | tail -2)"
	new_dump
	verify_sl -- 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' 'r["vl_unrun"] == 0' \
		'r["apm"]["possible_link_disjoint_pct"] >= 95'
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["apm"]; print("  %.1f%% of the pairs no bridge parts have an alternate apart; primary routes: %d not minimal, hops mean %.2f" % (a["possible_link_disjoint_pct"], a["primary"]["nonminimal"], a["primary"]["hops_mean"]))' "$WORK/verify.json"
	stop_sims
done
echo "routing nue: ok"
