#!/usr/bin/env bash
# The same fabric under OpenSM and under ibsmd, with the same LIDs (ibsmd starts from
# OpenSM's guid2lid, which it reads as its own): ibsa and saquery (infiniband-diags) ask each
# SA for whole tables, and the answers agree record by record on what both SMs define alike.
# OpenSM and saquery run through test/fabricsim's libfabricsim-umad.so, which gives them the
# kernel's RMPP: tables of any size travel whole, as on hardware.
# Usage: sa_vs_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need saquery
IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=8,levels=2" # 32 hosts, 12 switches

ask_all() { # DIR: whole tables, and paths from host-1 to every host
	local d=$1 q
	mkdir -p "$d"
	"$BUILD/test/fabricsim/fabricsim" ctl lids | sort >"$d/lids"
	for q in nodes links switches ports guids mcast; do
		"$IBSA" --transport sim --sim-node host-1 --json "$q" >"$d/$q.json" ||
			fail "ibsa $q against $(basename "$d")"
	done
	# P_Keys are for trusted requesters: both SAs take SM_Key 1 by default
	"$IBSA" --transport sim --sim-node host-1 --sm-key 1 --json pkeys >"$d/pkeys.json" ||
		fail "ibsa pkeys against $(basename "$d")"
	(cd "$d" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 30 saquery) >"$d/saquery-nodes.txt" 2>&1 ||
		fail "saquery against $(basename "$d"): $(tail -2 "$d/saquery-nodes.txt")"
	(cd "$d" && SIM_HOST=host-1 LD_PRELOAD=$PRELOAD timeout 30 saquery LR) >"$d/saquery-links.txt" 2>&1 ||
		fail "saquery LR against $(basename "$d")"
	# one service registered and read back
	"$IBSA" --transport sim --sim-node host-1 services add 0x1234 --name "sa_vs_opensm" >/dev/null ||
		fail "ibsa services add against $(basename "$d")"
	"$IBSA" --transport sim --sim-node host-2 --json services >"$d/services.json" ||
		fail "ibsa services against $(basename "$d")"
	: >"$d/paths.json"
	local from lid
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
(cd "$OSM" && SIM_HOST=host-32 OSM_TMP_DIR=$OSM OSM_CACHE_DIR=$OSM LD_PRELOAD=$PRELOAD \
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
        [fld(p) for p in ("info.lid", "info.lmc", "info.master_sm_lid",
                          "info.link_width_active", "info.link_speed_active", "info.neighbor_mtu",
                          "info.mtu_cap", "info.vl_cap")])
# PortState of every port but switch port 0, which OpenSM leaves in INIT and ibsmd makes ACTIVE
compare("ports", lambda r: (r["lid"], r["port_num"]), [fld("info.port_state")],
        keep=lambda r: r["port_num"] != 0)
compare("switches", lambda r: r["lid"], [fld("info.linear_fdb_cap"), fld("info.multicast_fdb_cap")])
compare("guids", lambda r: (r["lid"], r["block_num"]), [fld("info.guid[0]"), fld("info.guid[1]")])
# P_Key tables of CA ports and of the switch ports that face them, which both SMs set to the
# CA's keys for partition enforcement (OpenSM also lists the other switch ports' tables, which
# it reads and ibsmd neither sets nor reads)
switch_lids = {r["lid"] for r in load(a, "switches")}
facing = {(r["from_lid"], r["from_port"]) for r in load(a, "links")
          if r["from_lid"] in switch_lids and r["to_lid"] not in switch_lids}
compare("pkeys", lambda r: (r["lid"], r["port_num"], r["block_num"]), [lambda r: r["table"]["pkey"]],
        keep=lambda r: r["block_num"] == 0 and (r["lid"] not in switch_lids or (r["lid"], r["port_num"]) in facing))
n = sum(1 for r in load(b, "pkeys") if r["lid"] in switch_lids)
assert n == len(facing), f"ibsmd lists {n} switch port P_Key tables, {len(facing)} switch ports face CAs"
compare("paths", lambda r: (r["slid"], r["dlid"]),
        [fld(p) for p in ("sgid", "dgid", "mtu", "rate", "pkey", "sl", "reversible")])
compare("services", lambda r: (r["id"], r["gid"]), [fld(p) for p in ("pkey", "lease", "name", "data8")])
compare("mcast", lambda r: r["mgid"], [fld(p) for p in ("qkey", "mlid", "mtu", "rate", "pkey", "sl", "scope")])
for name, what in (("saquery-nodes.txt", "NodeRecord dump"), ("saquery-links.txt", "LinkRecord dump")):
    # record by record, in any order (each SA lists them in its own)
    ra = sorted(open(os.path.join(a, name)).read().split(what))
    rb = sorted(open(os.path.join(b, name)).read().split(what))
    assert ra == rb, f"saquery {name} differs: only OpenSM {[x for x in ra if x not in rb][:1]}, only ibsmd {[x for x in rb if x not in ra][:1]}"
    assert len(ra) > 10, f"saquery {name}: only {len(ra) - 1} records"
    print(f"saquery: {len(ra) - 1} records ({what}) agree")
PY
echo "SA answers agree with OpenSM's: ok"
