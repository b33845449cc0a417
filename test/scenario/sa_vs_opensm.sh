#!/usr/bin/env bash
# The same fabric under OpenSM and under ibsmd, with the same LIDs (ibsmd starts from
# OpenSM's guid2lid, which it reads as its own): ibsa and saquery (infiniband-diags, through
# libumad2sim.so) ask each SA the same per-LID questions, whose answers fit one MAD (under
# libumad2sim.so OpenSM cannot send a longer RMPP transfer); the answers agree record by record
# on what both SMs define alike. Full tables from ibsmd by RMPP are checked in sa_tables.sh.
# Usage: sa_vs_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need saquery
IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=8,levels=2" # 32 hosts, 12 switches

ask_all() { # DIR: per-LID queries (answers that fit one MAD, all OpenSM can send under
	# libumad2sim.so) for every endpoint, and paths from host-1 to every host
	local d=$1
	mkdir -p "$d"
	"$BUILD/test/fabricsim/fabricsim" ctl lids | sort >"$d/lids"
	local q lid name
	for q in nodes links switches pkeys guids ports; do
		: >"$d/$q.json"
	done
	while read -r _ lid _ name; do
		for q in nodes links; do
			"$IBSA" --transport sim --sim-node host-1 --json "$q" "$lid" >>"$d/$q.json" ||
				fail "ibsa $q $lid against $(basename "$d")"
		done
		case $name in
		host-*)
			for q in pkeys guids ports; do
				# P_Keys are for trusted requesters: OpenSM's default SA key is 1
				"$IBSA" --transport sim --sim-node host-1 --sm-key 1 --json "$q" "$lid" >>"$d/$q.json" ||
					fail "ibsa $q $lid against $(basename "$d")"
			done
			;;
		*)
			"$IBSA" --transport sim --sim-node host-1 --json switches "$lid" >>"$d/switches.json" ||
				fail "ibsa switches $lid against $(basename "$d")"
			;;
		esac
		umad2sim timeout 20 saquery "$lid" 2>/dev/null | grep -vE "^ibwarn" >>"$d/saquery-nodes.txt" || true
	done <"$d/lids"
	# one service registered and read back (one record: it fits the one MAD OpenSM sends)
	"$IBSA" --transport sim --sim-node host-1 services add 0x1234 --name "sa_vs_opensm" >/dev/null ||
		fail "ibsa services add against $(basename "$d")"
	"$IBSA" --transport sim --sim-node host-2 --json services >"$d/services.json" ||
		fail "ibsa services against $(basename "$d")"
	: >"$d/paths.json"
	local from
	from=$(awk '$4 == "host-1" { print $2 }' "$d/lids")
	for lid in $(awk '$4 ~ /^host-/ && $4 != "host-1" { print $2 }' "$d/lids"); do
		"$IBSA" --transport sim --sim-node host-1 --json paths "$from" "$lid" >>"$d/paths.json" ||
			fail "ibsa paths $from $lid against $(basename "$d")"
	done
}

# OpenSM first
start_fabricsim "$SPEC"
need opensm
OSM="$WORK/osm"
mkdir -p "$OSM"
(cd "$OSM" && SIM_HOST=host-32 OSM_TMP_DIR=$OSM OSM_CACHE_DIR=$OSM LD_PRELOAD=$UMAD2SIM \
	exec opensm -f "$OSM/opensm.log" -d 2 >"$OSM/stdout.log" 2>&1) &
PIDS+=($!)
wait_until 60 grep -q "SUBNET UP" "$OSM/opensm.log" || fail "OpenSM did not come up"
ask_all "$WORK/opensm"
stop_sims

# then ibsmd, on a fresh copy of the fabric, from OpenSM's LIDs
start_fabricsim "$SPEC"
mkdir -p "$WORK/state"
cp "$OSM/guid2lid" "$WORK/state/guid2lid" || fail "OpenSM wrote no guid2lid"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
ask_all "$WORK/ibsmd"

python3 - "$WORK/opensm" "$WORK/ibsmd" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]

def load(d, name):
    out = []
    for line in open(os.path.join(d, name + ".json")):
        line = line.strip()
        if line:
            out.extend(json.loads(line))
    return out

def compare(name, key, fields, keep=lambda r: True):
    x = {key(r): r for r in load(a, name) if keep(r)}
    y = {key(r): r for r in load(b, name) if keep(r)}
    assert x.keys() == y.keys(), f"{name}: records differ: only OpenSM {sorted(set(x) - set(y))[:5]}, only ibsmd {sorted(set(y) - set(x))[:5]}"
    for k in x:
        for f in fields:
            va, vb = f(x[k]), f(y[k])
            assert va == vb, f"{name} {k}: {f.__doc__}: OpenSM {va}, ibsmd {vb}"
    print(f"{name}: {len(x)} records agree")

def fld(path):
    def get(r):
        for p in path.split("."):
            r = r[p]
        return r
    get.__doc__ = path
    return get

compare("nodes", lambda r: (r["lid"], r["info"]["port_guid"]),
        [fld(p) for p in ("info.node_type", "info.num_ports", "info.node_guid", "info.system_image_guid",
                          "info.local_port_num", "desc.desc")])
compare("links", lambda r: (r["from_lid"], r["from_port"]), [fld("to_lid"), fld("to_port")])
compare("ports", lambda r: (r["lid"], r["port_num"]),
        [fld(p) for p in ("info.lid", "info.lmc", "info.master_sm_lid", "info.port_state",
                          "info.link_width_active", "info.link_speed_active", "info.neighbor_mtu",
                          "info.mtu_cap", "info.vl_cap")])
compare("switches", lambda r: r["lid"], [fld("info.linear_fdb_cap"), fld("info.multicast_fdb_cap")])
# GUIDCap 32 is 4 blocks of 72 bytes; OpenSM's first and only segment holds 2 of them
compare("guids", lambda r: (r["lid"], r["block_num"]), [fld("info.guid[0]"), fld("info.guid[1]")],
        keep=lambda r: r["block_num"] < 2)
# OpenSM puts BlockNum on the wire in host byte order: its block 1 reads as 256
compare("pkeys", lambda r: (r["lid"], r["port_num"], r["block_num"] >> 8 if r["block_num"] >= 256 else r["block_num"]), [lambda r: r["table"]["pkey"][0]])
compare("paths", lambda r: (r["slid"], r["dlid"]),
        [fld(p) for p in ("sgid", "dgid", "mtu", "rate", "pkey", "sl", "reversible")])
compare("services", lambda r: (r["id"], r["gid"]), [fld(p) for p in ("pkey", "lease", "name", "data8")])
sa = open(os.path.join(a, "saquery-nodes.txt")).read()
sb = open(os.path.join(b, "saquery-nodes.txt")).read()
assert sa == sb, "saquery NodeRecords differ"
print(f"saquery: {sa.count('NodeRecord dump')} NodeRecords by LID agree")
PY
echo "SA answers agree with OpenSM's: ok"
