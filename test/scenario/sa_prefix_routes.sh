#!/usr/bin/env bash
# PathRecords to another subnet's GID, through this subnet's routers, as OpenSM answers them
# (prefix_routes_file) and ibsmd after `ibsmd --import-opensm` of the same opensm.conf: a
# prefix with a route of its own goes to that router, any other to the first router, the
# records carry the asked GID and a hop limit of 255; a GID of this subnet that nobody holds
# fails on both. partitions.conf's ALL_ROUTERS gives the routers' ports their partition,
# and a host outside it learns no path through them on either SM.
# Usage: sa_prefix_routes.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
need saquery
need smpquery

cat >"$WORK/routers.net" <<'NET'
# one switch, three hosts, two routers to other subnets
switchguid=0x0002c90000000100
Switch 8 "sw1"
[1]	"h1"[1]
[2]	"h2"[1]
[3]	"h3"[1]
[4]	"rt1"[1]
[5]	"rt2"[1]
caguid=0x0002c90000000200
Ca 1 "h1"
[1]	"sw1"[1]
caguid=0x0002c90000000300
Ca 1 "h2"
[1]	"sw1"[2]
caguid=0x0002c90000000400
Ca 1 "h3"
[1]	"sw1"[3]
rtguid=0x0002c90000001000
Rt 1 "rt1"
[1]	"sw1"[4]
rtguid=0x0002c90000001100
Rt 1 "rt2"
[1]	"sw1"[5]
NET
# port GUIDs: the node's + 1
RT1=0x0002c90000001001 RT2=0x0002c90000001101 H1=0x0002c90000000201 H2=0x0002c90000000301
cat >"$WORK/prefix-routes.conf" <<CONF
# prefix 2001:db8:0:2::/64 behind rt2, everything else behind the first router
20010db800000002 $RT2
* *
CONF
# h2 is a limited member of the default partition, as the routers are: it shares no
# partition with them
cat >"$WORK/partitions.conf" <<CONF
Default=0x7fff : ALL_SWITCHES=full, SELF=full, $H1=full ;
routed=0x0101 : ALL_ROUTERS=full, $H1=full ;
CONF
cat >"$WORK/opensm.conf" <<CONF
force_log_flush TRUE
prefix_routes_file $WORK/prefix-routes.conf
partition_config_file $WORK/partitions.conf
CONF

gid() { python3 -c 'import ipaddress,sys; print(ipaddress.IPv6Address((0xfe80 << 112) | int(sys.argv[1], 16)))' "$1"; }
# path FROM-HOST FROM-GUID DGID: "DLID DGID HOPLIMIT" of the PathRecord the SA answers, or
# "none"
path() {
	local out
	out=$(on_sim "$1" saquery -p --sgid-to-dgid "$(gid "$2")-$3" 2>/dev/null) || { echo none; return; }
	python3 -c '
import re, sys
f = dict(re.findall(r"^\s*([A-Za-z_0-9]+)\.+(\S+)", sys.stdin.read(), re.M))
print("%d %s 0x%02x" % (int(f["dlid"], 0), f["dgid"], int(f["hop_flow_raw"], 16) & 0xff) if "dlid" in f else "none")' <<<"$out"
}
lid() { "$FS" ctl lids | awk -v h="$1" '$4 == h { print $2 }'; }
OWN="$(gid 0x0002c900000009ff)"   # this subnet's prefix, a GUID nobody holds
FS="$BUILD/test/fabricsim/fabricsim"

# answers NAME: the three questions to each SM, with the routers' LIDs as it gave them
answers() {
	{
		echo "rt2 via its prefix: $(path h1 $H1 2001:db8:0:2::77) (rt2 is LID $(lid rt2))"
		echo "other prefix via the first router: $(path h1 $H1 2001:db8:0:9::77) (rt1 is LID $(lid rt1))"
		echo "this subnet, nobody's GUID: $(path h1 $H1 "$OWN")"
		echo "from h2, outside the routers' partition: $(path h2 $H2 2001:db8:0:2::77)"
		echo "rt1's keys: $(on_sim h3 smpquery pkeys "$(lid rt1)" 1 2>/dev/null | grep -o '0x[0-9a-f]*' | grep -v 0x0000 | sort | tr '\n' ' ')"
	} >"$WORK/$1.answers"
}
expect() { # NAME: the answers each SM must give
	local f="$WORK/$1.answers" r1 r2
	r1=$(lid rt1) r2=$(lid rt2)
	grep -qx "rt2 via its prefix: $r2 2001:db8:0:2::77 0xff (rt2 is LID $r2)" "$f" &&
		grep -qx "other prefix via the first router: $r1 2001:db8:0:9::77 0xff (rt1 is LID $r1)" "$f" &&
		grep -qx "this subnet, nobody's GUID: none" "$f" &&
		grep -qx "from h2, outside the routers' partition: none" "$f" &&
		grep -q "rt1's keys: .*0x8101" "$f"
}

# 1. OpenSM
start_fabricsim "$WORK/routers.net"
mkdir -p "$WORK/opensm"
(cd "$WORK/opensm" && OSM_TMP_DIR=$WORK/opensm OSM_CACHE_DIR=$WORK/opensm SIM_HOST=h3 \
	LD_PRELOAD=$PRELOAD exec opensm -F "$WORK/opensm.conf" -f "$WORK/opensm/opensm.log" \
	>"$WORK/opensm/stdout.log" 2>&1) &
PIDS+=($!)
OSM=$!
wait_until 120 grep -q "SUBNET UP" "$WORK/opensm/opensm.log" || fail "OpenSM did not bring the subnet up"
wait_until 30 eval 'answers opensm; expect opensm' ||
	fail "OpenSM's answers are not the ones this test expects: $(cat "$WORK/opensm.answers")"
stop_pids "$OSM" "${PIDS[0]}"
PIDS=()
echo "OpenSM:"
sed 's/^/  /' "$WORK/opensm.answers"

# 2. ibsmd, from the same opensm.conf
"$BUILD/daemon/ibsmd" --import-opensm "$WORK/opensm.conf" >"$WORK/ibsmd.yaml" 2>"$WORK/import.err" ||
	fail "the importer refused opensm.conf: $(cat "$WORK/import.err")"
grep -q "^  - \"20010db800000002 $RT2\"" "$WORK/ibsmd.yaml" ||
	fail "prefix routes not imported: $(grep -A3 prefix_routes "$WORK/ibsmd.yaml")"
start_fabricsim "$WORK/routers.net"
SIM_HOST=h3 start_ibsmd --config "$WORK/ibsmd.yaml" --sweep-interval 0
wait_until 30 eval 'answers ibsmd; expect ibsmd' ||
	fail "ibsmd's answers differ: $(cat "$WORK/ibsmd.answers")"
echo "ibsmd:"
sed 's/^/  /' "$WORK/ibsmd.answers"
echo "PathRecords to other subnets through the routers, and ALL_ROUTERS, as OpenSM's: ok"
echo "PASS"
