#!/usr/bin/env bash
# torus-2QoS against OpenSM's, from outside, with one torus-2QoS.conf: a 4x5x3 torus whose
# file names its axes otherwise than the cabling's port order (its x is fabricsim's y, pointed
# the other way; its z points down), the origin at a seed switch in the middle, moved by
# datelines. OpenSM routes it with `routing_engine torus-2QoS`; `ibsmd --import-opensm` of the
# same opensm.conf gives ibsmd's torus with the file, and on a fresh copy of the fabric:
# - every switch forwards every host's LID out of the same port as under OpenSM (the same
#   dimension order, the same way round each ring, ties included);
# - every host pair's PathRecord carries the same SL (the dateline bits) as OpenSM's SA gave;
# - ibsmd uses no more VLs than OpenSM's SL-to-VL tables do, and fabricsim verify, following
#   each path's own SL, finds no credit loop.
# A file that does not match the cabling fails the engine with the axis named, and the chain
# moves on. Usage: routing_torus2qos.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
FS="$BUILD/test/fabricsim/fabricsim"
SPEC="torus:dims=4x5x3,hosts=1"

# switch GUIDs by name (sw-X-Y-Z, fabricsim's coordinates), from the fabric's net file
"$FS" dump "$SPEC" | awk '/^switchguid=/ { g = substr($1, 12) } /^Switch/ { gsub(/"/, "", $3); print $3, g }' >"$WORK/guids"
g() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/guids"; }
S=$(g sw-1-2-1)
cat >"$WORK/torus-2QoS.conf" <<CONF
# x: fabricsim's y pointed down, y: fabricsim's x, z: fabricsim's z pointed down
torus 5 4 3
xp_link $S $(g sw-1-1-1)
xm_link $S $(g sw-1-3-1)
yp_link $S $(g sw-2-2-1)
ym_link $S $(g sw-0-2-1)
zp_link $S $(g sw-1-2-0)
zm_link $S $(g sw-1-2-2)
x_dateline 2
y_dateline -1
z_dateline 1
CONF
# (OpenSM's torus-2QoS wants QoS on: its second QoS level is on SL bit 3)
cat >"$WORK/opensm.conf" <<CONF
qos TRUE
routing_engine torus-2QoS
torus_config $WORK/torus-2QoS.conf
force_log_flush TRUE
CONF

# routes NAME: "SWITCH HOST PORT" for every switch and host; paths NAME: "SRC DST SL" for
# every pair of hosts, as the SA answers
routes() {
	"$FS" ctl lids | awk '$4 ~ /^host-/ { print $2, $4 }' >"$WORK/$1.hostlids"
	for sw in $(awk '{ print $1 }' "$WORK/guids"); do
		"$FS" ctl lft "$sw" | awk -v sw="$sw" 'NR == FNR { h[$1] = $2; next } ($1 in h) { print sw, h[$1], $2 }' \
			"$WORK/$1.hostlids" -
	done | sort >"$WORK/$1.routes"
}
paths() {
	SIM_HOST=host-1 "$BUILD/cli/ibsa" --transport sim --sm-key 1 --timeout 30000 --json paths all all \
		>"$WORK/$1.paths.json" 2>"$WORK/$1.paths.err" || return 1
	python3 - "$WORK/$1.paths.json" "$WORK/$1.hostlids" "$WORK/$1.sl.dump" >"$WORK/$1.paths" <<'PY'
import json, sys
name = dict(l.split() for l in open(sys.argv[2]))
recs = json.load(open(sys.argv[1]))
sl = {}
for r in recs:
    s, d = name.get(str(r["slid"])), name.get(str(r["dlid"]))
    sl[(r["slid"], r["dlid"])] = r["sl"]
    if s and d and s != d:
        print(s, d, r["sl"])
# the SA's SLs as a path SL file (ibsmd-path-sl.dump's format) for fabricsim verify
top = max(max(k) for k in sl)
with open(sys.argv[3], "w") as f:
    f.write("max_lid 0x%04x\n" % top)
    srcs = sorted({k[0] for k in sl})
    for i, s in enumerate(srcs):
        f.write("row %d %s\n" % (i, "".join("%x" % sl[(s, d)] if (s, d) in sl else "-" for d in range(1, top + 1))))
    for i, s in enumerate(srcs):
        f.write("lid 0x%04x row %d\n" % (s, i))
PY
	sort -o "$WORK/$1.paths" "$WORK/$1.paths"
	[ "$(wc -l <"$WORK/$1.paths")" = $((60 * 59)) ]
}
# top_vl NAME: the highest VL a packet takes along the SLs the SA gave, and no credit loop
top_vl() {
	"$FS" verify --json --path-sl "$WORK/$1.sl.dump" >"$WORK/$1.verify.json" 2>/dev/null || true
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and not r["credit_loops"]["loop"], r["issues"][:3]; print(r["vls_used"].bit_length() - 1)' \
		"$WORK/$1.verify.json"
}

# 1. OpenSM's torus-2QoS. It lays its SLs on the VLs the links run when it routes: on a
# fresh fabric (VL0 only) all on one, which loops; a first sweep sets them, as on a running
# fabric
start_fabricsim "$SPEC"
run_opensm -F "$WORK/opensm.conf"
mkdir -p "$WORK/osmd"
(cd "$WORK/osmd" && OSM_TMP_DIR=$WORK/osmd OSM_CACHE_DIR=$WORK/osmd SIM_HOST=host-1 \
	LD_PRELOAD=$PRELOAD exec opensm -F "$WORK/opensm.conf" -f "$WORK/osmd/opensm.log" \
	>"$WORK/osmd/stdout.log" 2>&1) &
PIDS+=($!)
OSM=$!
wait_until 120 grep -q "SUBNET UP" "$WORK/osmd/opensm.log" || fail "OpenSM did not bring the subnet up"
grep -q "torus-2QoS tables configured on all switches" "$WORK/osmd/opensm.log" ||
	fail "OpenSM did not route with torus-2QoS: $(grep -E 'ERR|routing engine' "$WORK/osmd/opensm.log" | head -5)"
routes opensm
wait_until 60 paths opensm || fail "OpenSM's PathRecords: $(cat "$WORK/opensm.paths.err") $(wc -l <"$WORK/opensm.paths")"
osm_vl=$(top_vl opensm) || fail "fabricsim verify of OpenSM's tables and SLs: $(cat "$WORK/opensm.verify.json")"
stop_pids "$OSM" "${PIDS[0]}"
PIDS=()
echo "OpenSM torus-2QoS: $(wc -l <"$WORK/opensm.routes") routes, $(wc -l <"$WORK/opensm.paths") path SLs, VLs 0-$osm_vl, no credit loop"

# 2. ibsmd from the same opensm.conf
"$BUILD/daemon/ibsmd" --import-opensm "$WORK/opensm.conf" >"$WORK/ibsmd.yaml" 2>"$WORK/import.err" ||
	fail "the importer refused opensm.conf: $(cat "$WORK/import.err")"
grep -q "^torus_config: \"$WORK/torus-2QoS.conf\"" "$WORK/ibsmd.yaml" && grep -q '^routing_engine: "torus,minhop"' "$WORK/ibsmd.yaml" ||
	fail "torus-2QoS imported as: $(grep -E 'torus|routing' "$WORK/ibsmd.yaml")"
echo "dump_dir: $WORK/dump" >>"$WORK/ibsmd.yaml"
echo "dump_after_sweep: true" >>"$WORK/ibsmd.yaml"
start_fabricsim "$SPEC"
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml" --sweep-interval 0
grep -q "routed by torus" "$WORK/ibsmd.log" || fail "not routed by torus: $(grep -E 'routing' "$WORK/ibsmd.log" | tail -3)"
grep -q "torus_config $WORK/torus-2QoS.conf: x: 5 switches, a ring" "$WORK/ibsmd.log" ||
	fail "the file's shape is not logged: $(grep torus_config "$WORK/ibsmd.log")"
routes ibsmd
wait_until 60 paths ibsmd || fail "ibsmd's PathRecords: $(cat "$WORK/ibsmd.paths.err")"
diff "$WORK/opensm.routes" "$WORK/ibsmd.routes" >"$WORK/routes.diff" ||
	fail "$(grep -c '^>' "$WORK/routes.diff") of $(wc -l <"$WORK/opensm.routes") routes differ from OpenSM's (< OpenSM, > ibsmd): $(head -6 "$WORK/routes.diff")"
echo "every switch forwards every host's LID as under OpenSM: $(wc -l <"$WORK/ibsmd.routes") routes: ok"
diff "$WORK/opensm.paths" "$WORK/ibsmd.paths" >"$WORK/paths.diff" ||
	fail "$(grep -c '^>' "$WORK/paths.diff") path SLs differ from OpenSM's (SRC DST SL; < OpenSM, > ibsmd): $(head -6 "$WORK/paths.diff")"
echo "every host pair's PathRecord SL as OpenSM's: $(wc -l <"$WORK/ibsmd.paths") pairs: ok"
verify_sl -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' \
	'r["vl_unrun"] == 0' "r[\"vls_used\"].bit_length() - 1 <= $osm_vl"
our_vl=$(top_vl ibsmd) || fail "fabricsim verify of ibsmd's tables and SA SLs: $(cat "$WORK/ibsmd.verify.json")"
echo "no credit loop along each path's own SL (the SA's and the dump's), VLs 0-$our_vl, OpenSM's 0-$osm_vl: ok"
stop_pids "$IBSMD_PID"

# 3. a file that is not this torus: the engine fails naming the axis, the chain moves on
sed -i 's/^torus 5 4 3$/torus 5 4 4/' "$WORK/torus-2QoS.conf"
ibsmd_once --config "$WORK/ibsmd.yaml" || fail "ibsmd --once with a wrong torus_config: $(tail -3 "$WORK/ibsmd.log")"
grep -q "torus_config says 4 switches along z" "$WORK/ibsmd.log" ||
	fail "the mismatch is not named: $(grep -E 'routing|torus' "$WORK/ibsmd.log" | tail -3)"
grep -q "routed by minhop" "$WORK/ibsmd.log" || fail "the chain did not move on to minhop"
echo "a torus_config that is not the cabling's: refused naming the axis, minhop routed: ok"
echo "PASS"
