#!/usr/bin/env bash
# One partitions.conf, fed to OpenSM and, through "ibsmd --import-opensm", to ibsmd, on the
# same fabric: every endpoint's P_Key table (every block, read with smpquery: CA ports and
# switch management ports) holds the same keys with the same key at index 0, and the SA's
# multicast groups (saquery -g: MGID, P_Key, MTU, rate, SL) are the same. The file
# uses ALL, ALL_CAS, ALL_SWITCHES, SELF, full and limited members, defmember, a partition
# split over two definitions, IPoIB flags, a predefined group (mgid=), and 40 more
# partitions, so that host ports hold 44 keys: two P_Key blocks.
# Usage: partitions_vs_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
need smpquery
need saquery
FS="$BUILD/test/fabricsim/fabricsim"
SPEC="fattree:radix=8,levels=2"

cat >"$WORK/partitions.conf" <<'CONF'
# a site's partitions, as OpenSM reads them
Default=0x7fff, ipoib : ALL, ALL_SWITCHES=full, SELF=full ;
storage=0x8001, ipoib, mtu=5, rate=7 : ALL_CAS=full ;
tenantA=0x0a01 : 0x100001=full, 0x100003,
    0x100005=limited ;
tenantB=0x0b01, defmember=full : 0x100007, 0x100009 ;
tenantA=0x0a01 : 0x10000b=full ;
video=0x0c01, ipoib : SELF=full, ALL_CAS=limited, mgid=ff12:1234::1,mtu=4,rate=3,Q_Key=0x1234 ;
CONF
for i in $(seq 0 39); do
	printf 'bulk%d=0x%04x : ALL_CAS=full ;\n' "$i" $((0x1000 + i)) >>"$WORK/partitions.conf"
done

# tables NAME: every endpoint's P_Key table and the SA's groups, from the SM now running;
# false while an endpoint shows no key (not set yet, or its read lost under load) or the SA
# no group
tables() {
	local out="$WORK/$1.keys"
	: >"$out"
	"$FS" ctl lids | while read -r guid lid _ node; do
		local port=1
		case "$node" in host-*) port=1 ;; *) port=0 ;; esac
		on_sim host-3 smpquery pkeys "$lid" "$port" 2>/dev/null |
			awk -v g="$guid" '/^ *[0-9]+:/ { i = $1 + 0; for (k = 2; k <= NF; k++) if ($k != "0x0000") print g, i + k - 2, $k }' \
				>>"$out"
	done
	# every endpoint holds a key (the default partition's at least): the caller waits
	[ "$(awk '{ print $1 }' "$out" | sort -u | wc -l)" = "$("$FS" ctl lids | wc -l)" ] || return 1
	# saquery -g prints "Field....value" lines; one group ends with its SL
	on_sim host-3 saquery -g 2>/dev/null |
		awk '{ f = $1; v = $1; sub(/\.+.*/, "", f); sub(/^[A-Za-z]+\.+/, "", v) }
		     f == "MGID" { m = v } f == "pkey" { p = toupper(v) } f == "Mtu" { mtu = v }
		     f == "Rate" { r = v } f == "SL" { print m, "pkey", p, "mtu", mtu, "rate", r, "sl", v }' |
		sort >"$WORK/$1.groups"
	[ -s "$WORK/$1.groups" ]
}

# 1. OpenSM
start_fabricsim "$SPEC"
mkdir -p "$WORK/opensm"
echo "force_log_flush TRUE" >"$WORK/opensm/opensm.conf" # so that "SUBNET UP" shows at once
(cd "$WORK/opensm" && OSM_TMP_DIR=$WORK/opensm OSM_CACHE_DIR=$WORK/opensm SIM_HOST=host-1 \
	LD_PRELOAD=$PRELOAD exec opensm -F "$WORK/opensm/opensm.conf" -P "$WORK/partitions.conf" \
	-f "$WORK/opensm/opensm.log" \
	>"$WORK/opensm/stdout.log" 2>&1) &
PIDS+=($!)
OSM=$!
wait_until 120 grep -q "SUBNET UP" "$WORK/opensm/opensm.log" || fail "OpenSM did not bring the subnet up"
wait_until 30 verify_passes || fail "OpenSM's fabric does not verify"
# its SA answers with the groups once they are made
wait_until 30 tables opensm || fail "OpenSM: P_Key tables $(wc -l <"$WORK/opensm.keys"), groups $(wc -l <"$WORK/opensm.groups")"
stop_pids "$OSM" "${PIDS[0]}"
PIDS=()
echo "OpenSM: $(wc -l <"$WORK/opensm.keys") keys, $(wc -l <"$WORK/opensm.groups") groups"

# 2. ibsmd, from the same file through the importer
"$BUILD/daemon/ibsmd" --import-opensm --partitions "$WORK/partitions.conf" >"$WORK/ibsmd.yaml" ||
	fail "the importer refused partitions.conf"
start_fabricsim "$SPEC"
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml" --sweep-interval 0
wait_until 30 verify_passes || fail "ibsmd's fabric does not verify"
wait_until 30 tables ibsmd || fail "ibsmd: P_Key tables $(wc -l <"$WORK/ibsmd.keys"), groups $(wc -l <"$WORK/ibsmd.groups")"
echo "ibsmd:  $(wc -l <"$WORK/ibsmd.keys") keys, $(wc -l <"$WORK/ibsmd.groups") groups"

python3 - "$WORK/opensm.keys" "$WORK/ibsmd.keys" <<'PY' || fail "P_Key tables differ"
import sys, collections
def load(f):
    t = collections.defaultdict(dict)
    for line in open(f):
        g, i, k = line.split()
        t[g][int(i)] = k.lower()
    return t
o, b = load(sys.argv[1]), load(sys.argv[2])
bad = []
for g in sorted(set(o) | set(b)):
    ko, kb = sorted(o[g].values()), sorted(b[g].values())
    if ko != kb:
        bad.append(f"{g}: OpenSM {len(ko)} keys, ibsmd {len(kb)}: only OpenSM {sorted(set(ko)-set(kb))[:6]}, only ibsmd {sorted(set(kb)-set(ko))[:6]}")
    elif o[g].get(0) != b[g].get(0):
        bad.append(f"{g}: index 0 OpenSM {o[g].get(0)}, ibsmd {b[g].get(0)}")
print(f"  {len(o)} endpoints compared, {sum(len(v) for v in o.values())} keys")
if bad:
    sys.exit("\n".join(bad[:10]))
two = sum(1 for v in b.values() if max(v) >= 32)
print(f"  {two} endpoints use a second P_Key block")
assert two > 0, "no endpoint has more than 32 keys"
PY
diff "$WORK/opensm.groups" "$WORK/ibsmd.groups" >"$WORK/groups.diff" ||
	fail "the SA's groups differ (< OpenSM, > ibsmd): $(cat "$WORK/groups.diff")"
echo "every endpoint's P_Key table and every multicast group agree with OpenSM's: ok"
