#!/usr/bin/env bash
# dfsssp, the engine that keeps shortest paths and breaks their credit loops with virtual
# layers (one SL and one VL each), checked from outside:
# - on the irregular graph where updn once left a credit loop, and on a 3D torus with a
#   failed link: every pair reached by a shortest path; fabricsim verify, following each
#   path's own SL (ibsmd-path-sl.dump) through the SL-to-VL tables the switches hold, finds
#   no credit loop and no VL a link does not run; the same tables followed on one SL do
#   have a loop (the layers are needed); the SA's PathRecords carry the dump's SLs;
# - routing_max_vls: 1 makes it fail with the reason, and the chain moves on to updn;
# - a QoS level's SL is stacked on the layers (SL = class x layers + layer): the
#   PathRecords of a storage service carry it, and verify following those SLs is clean.
# Usage: routing_dfsssp.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"

config() { # [YAML LINE...]
	local l
	{
		echo "routing_engine: dfsssp"
		echo "log_level: info"
		echo "sweep_interval: 0"
		echo "dump_dir: $WORK/dump"
		echo "dump_after_sweep: true"
		for l in "$@"; do echo "$l"; done
	} >"$WORK/ibsmd.yaml"
}

pr_sl() { # SLID DLID [ibsa options]: the SL of the SA's PathRecord (while a sweep the
	# test started is still under way the SA may have none yet: asked again)
	local s=$1 d=$2 sl="" i
	shift 2
	for i in $(seq 1 40); do
		sl=$(SIM_HOST=$SM_HOST "$IBSA" --transport sim --json paths "$s" "$d" "$@" |
			python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["sl"] if r else "")')
		[ -n "$sl" ] && break
		sleep 0.25
	done
	echo "$sl"
}

# check_fabric SPEC SM_HOST: dfsssp up on it, checked as the header says
check_fabric() {
	SM_HOST=$2
	start_fabricsim "$1"
	config
	# the previous fabric's dump must not pass for this one's (it did, under load)
	rm -f "$WORK/dump/ibsmd-path-sl.dump"
	SIM_HOST=$SM_HOST start_ibsmd --config "$WORK/ibsmd.yaml"
	grep -q "routed by dfsssp" "$WORK/ibsmd.log" || fail "not routed by dfsssp: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
	layers=$(sed -n 's/.*dfsssp: .* \([0-9]*\) virtual layer(s) of .*/\1/p' "$WORK/ibsmd.log" | tail -1)
	[ "${layers:-0}" -ge 2 ] || fail "dfsssp used ${layers:-no} layers: $(grep 'dfsssp:' "$WORK/ibsmd.log")"
	wait_until 20 test -s "$WORK/dump/ibsmd-path-sl.dump" || fail "no path SL dump"
	verify_sl -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'r["unicast"]["nonminimal"] == 0' \
		'not r["credit_loops"]["loop"]' 'r["vl_unrun"] == 0' "r['sls_used'] == (1 << $layers) - 1" \
		"r['vls_used'] == (1 << $layers) - 1"
	"$FS" verify --json >"$WORK/flat.json" || true
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["credit_loops"]["loop"] else 1)' "$WORK/flat.json" ||
		fail "the same tables on SL 0 alone have no credit loop: the layers were not needed"
	echo "  $layers layers; on one SL the same tables have a credit loop"
	# the SA gives the SLs the dump says, for paths across the fabric
	"$FS" ctl lids | awk '$4 !~ /^(r[0-9]|sw|switch)/ { print $2 }' | sort -u >"$WORK/hostlids"
	local n=0 differ=0 nonzero=0 s d want got
	while read -r s d; do
		want=$(sl_of "$s" "$d")
		got=$(pr_sl "$s" "$d")
		n=$((n + 1))
		[ "$want" = "$got" ] || differ=$((differ + 1))
		[ "$got" = 0 ] || nonzero=$((nonzero + 1))
	done < <(awk 'NR % 7 == 1 { a[++n] = $1 } END { for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) if (i != j) print a[i], a[j] }' "$WORK/hostlids" | head -150)
	[ "$differ" = 0 ] || fail "$differ of $n PathRecords carry another SL than the dump"
	[ "$nonzero" -gt 0 ] || fail "none of $n PathRecords is on a layer above 0"
	echo "  $n PathRecords: the dump's SLs ($nonzero above layer 0)"
}

qos() { # SL: a storage level of that SL for a service ID range, then a reroute
	config "qos:" "  levels:" "    - name: storage" "      sl: $1" \
		"  rules:" "    - service_id: 0x1000000000000001-0x10000000000000ff" "      level: storage"
	local n
	n=$(grep -c "config: reload of" "$WORK/ibsmd.log" || true)
	kill -HUP "$IBSMD_PID"
	wait_until 10 sh -c "[ \$(grep -c 'config: reload of' '$WORK/ibsmd.log') -gt $n ]" ||
		fail "ibsmd did not log the reload"
	"$IBSA" --control "$WORK/control" reroute >/dev/null || fail "ibsa reroute"
}

echo "== dfsssp on the irregular graph where updn once left a credit loop"
check_fabric "$(dirname "$0")/fabrics/random30-updn-loop.net" h0001

echo "== a QoS level stacked on the layers"
qos 1
wait_until 30 grep -q "dfsssp: $layers layers, QoS SLs stacked on them" "$WORK/ibsmd.log" ||
	fail "no stacking: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
wait_until 20 test "$WORK/dump/ibsmd-path-sl.dump" -nt "$WORK/ibsmd.yaml" || fail "no new dump"
stacked=0
while read -r s d; do
	want=$(($(sl_of "$s" "$d") + layers))
	got=$(pr_sl "$s" "$d" --sid 0x1000000000000005)
	[ "$got" = "$want" ] || fail "storage path $s -> $d: SL $got, want $want (layer $(sl_of "$s" "$d") + $layers)"
	[ "$(pr_sl "$s" "$d")" = "$(sl_of "$s" "$d")" ] || fail "the default path $s -> $d lost its layer's SL"
	stacked=$((stacked + 1))
done < <(awk 'NR % 9 == 2 { a[++n] = $1 } END { for (i = 2; i <= n; i++) print a[1], a[i] }' "$WORK/hostlids")
verify_sl --sl "$layers" -- 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' 'r["vl_unrun"] == 0' \
	"r['vls_used'] == ((1 << $layers) - 1) << $layers"
echo "  $stacked storage PathRecords on SL $layers + their layer, the others on their layer"

echo "== routing_max_vls: 1 refuses it, updn routes"
config "routing_max_vls: 1"
sed -i 's/^routing_engine: dfsssp/routing_engine: "dfsssp,updn"/' "$WORK/ibsmd.yaml"
kill -HUP "$IBSMD_PID"
wait_until 30 grep -q "routed by updn" "$WORK/ibsmd.log" || fail "updn did not take over: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
grep -q "routing engine dfsssp failed: dfsssp: the shortest paths need more than 1 virtual layers to be free of credit loops, and routing_max_vls allows 1 VL" "$WORK/ibsmd.log" ||
	fail "the failure does not say why: $(grep 'dfsssp failed' "$WORK/ibsmd.log")"
wait_until 30 sh -c "'$FS' verify >/dev/null" || fail "updn's routes do not verify"
echo "  refused with the reason; updn routes, verify clean"
stop_sims

echo "== dfsssp on a 4x4x4 torus with a failed link"
check_fabric "torus:dims=4x4x4,hosts=1,missing-links=1,seed=3" "host-1"

echo "== a QoS level that does not fit on top of the layers"
# the smallest class SL whose stack needs more than the 8 VLs the links run
cls=$((8 / layers))
need=$(((cls + 1) * layers))
qos "$cls"
wait_until 30 grep -q "qos: the policy's SLs 0-$cls on top of dfsssp's $layers layers need $need VLs, and the switch links run 8" "$WORK/ibsmd.log" ||
	fail "no refusal: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
read -r s d < <(awk 'NR == 3 { a = $1 } NR == 40 { print a, $1 }' "$WORK/hostlids")
[ "$(pr_sl "$s" "$d" --sid 0x1000000000000005)" = "$(sl_of "$s" "$d")" ] ||
	fail "a storage path that cannot be stacked does not keep its layer's SL"
grep -q "qos: SL $cls on top of dfsssp's $layers layers needs $need VLs" "$WORK/ibsmd.log" ||
	fail "the SA did not say why the storage path keeps its layer's SL"
echo "  refused with the reason ($layers layers x $((cls + 1)) SLs > 8 VLs): storage paths keep their layer's SL"
echo "routing dfsssp: ok"
