#!/usr/bin/env bash
# Every option of OpenSM's own configuration has a fate in `ibsmd --import-opensm`: the file
# `opensm -c` writes (OpenSM 3.3.23's defaults) imports with exit 0 into YAML that
# --check-config takes, and each of its options comes out as an ibsmd key or as a comment
# saying what ibsmd does about it, never a bare "left out" nor "not in ibsmd yet". A tuned
# file: the settings ibsmd has keys for carry over (read back with --dump-config), and each
# value that asks for what ibsmd does not do is a warning on standard error naming its line.
# Usage: import_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
IBSMD="$BUILD/daemon/ibsmd"

opensm -c "$WORK/opensm.conf" >"$WORK/opensm-c.log" 2>&1 || true
[ -s "$WORK/opensm.conf" ] || fail "opensm -c wrote nothing: $(cat "$WORK/opensm-c.log")"

# fates FILE.conf FILE.yaml: each option line of the OpenSM file (but "(null)", which OpenSM
# writes for "not set") has its fate in the YAML
fates() {
	python3 - "$1" "$2" <<'PY'
import re, sys
conf, yaml = sys.argv[1], open(sys.argv[2]).read()
keys = {l.split(":")[0] for l in yaml.splitlines() if l and not l.startswith(("#", " "))}
comments = {}
for l in yaml.splitlines():
    m = re.match(r"# opensm (\S+) (.*?): (.*)$", l)
    if m:
        comments[m.group(1)] = m.group(3)
# OpenSM's keys carried over under another name, and those folded into one ibsmd key
renamed = {"m_key_lease_period": "m_key_lease", "m_key_protection_level": "m_key_protect",
           "sminfo_polling_timeout": "sm_poll_interval_ms",
           "polling_retry_number": "sm_poll_retries", "max_wire_smps": "mad_window",
           "transaction_timeout": "mad_timeout_ms", "transaction_retries": "mad_retries",
           "root_guid_file": "root_guids", "nue_max_num_vls": "routing_max_vls",
           "virt_enabled": "virtualization", "perfmgr": "pm_interval",
           "perfmgr_sweep_time_s": "pm_interval", "partition_config_file": "partitions",
           "force_link_speed": "link_speed_enabled", "force_link_width": "link_width_enabled",
           "force_link_speed_ext": "link_speed_ext_enabled",
           "prefix_routes_file": "prefix_routes", "perfmgr_ignore_cas": "pm_ignore_cas",
           "node_name_map_name": "node_name_map"}
bad = []
for n, l in enumerate(open(conf), 1):
    l = l.strip()
    if not l or l.startswith("#"):
        continue
    k, _, v = l.partition(" ")
    v = v.strip()
    if v == "(null)":
        continue
    if k.startswith("qos"):
        continue  # the qos: section, or "qos FALSE: not imported" below
    fate = comments.get(k)
    if fate is None and renamed.get(k, k) not in keys:
        bad.append(f"line {n}: {k} {v}: no fate")
    elif fate and re.search(r"left out|not in ibsmd yet|no counterpart", fate):
        bad.append(f"line {n}: {k} {v}: {fate}")
    elif fate == "":
        bad.append(f"line {n}: {k}: an empty fate")
if "# opensm qos FALSE" not in yaml:
    bad.append("qos FALSE: not said")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
}

"$IBSMD" --import-opensm "$WORK/opensm.conf" >"$WORK/default.yaml" 2>"$WORK/default.err" ||
	fail "OpenSM's default file does not import: $(cat "$WORK/default.err")"
"$IBSMD" --check-config "$WORK/default.yaml" >/dev/null 2>"$WORK/check.err" ||
	fail "its YAML is refused: $(cat "$WORK/check.err")"
fates "$WORK/opensm.conf" "$WORK/default.yaml" >"$WORK/fates.out" ||
	fail "options of OpenSM's default file without a fate: $(cat "$WORK/fates.out")"
# at its defaults nothing is lost: the one warning allowed is a partitions file this
# machine does not have
if grep -v 'partition_config_file' "$WORK/default.err" | grep -q 'warning:'; then
	fail "warnings at OpenSM's defaults: $(cat "$WORK/default.err")"
fi
# OpenSM's slow defaults do not replace ibsmd's (a 10 s master poll, 4 SMPs on the wire)
grep -q '^# opensm sminfo_polling_timeout 10000: OpenSM.s default; ' "$WORK/default.yaml" &&
	! grep -q '^sm_poll_interval_ms\|^mad_window' "$WORK/default.yaml" ||
	fail "OpenSM's default poll and window replaced ibsmd's: $(grep -E 'poll|window|wire' "$WORK/default.yaml")"
n=$(grep -cv '^ *$\|^#' "$WORK/opensm.conf")
echo "opensm -c's file ($n options): exit 0, --check-config takes it, every option has its fate, ibsmd's poll and window kept: ok"

# a tuned file: link settings carried over; what ibsmd does not do warned about, by line
sed -e 's/^head_of_queue_lifetime .*/head_of_queue_lifetime 0x14/' \
	-e 's/^leaf_vl_stall_count .*/leaf_vl_stall_count 0x05/' \
	-e 's/^packet_life_time .*/packet_life_time 0x13/' \
	-e 's/^force_link_width .*/force_link_width 2/' \
	-e 's/^force_link_speed .*/force_link_speed 3/' \
	-e 's/^keep_pkey_indexes .*/keep_pkey_indexes FALSE/' \
	-e 's/^qos_high_limit .*/qos_high_limit 12/' \
	-e 's/^sminfo_polling_timeout .*/sminfo_polling_timeout 2000/' \
	-e 's/^scatter_ports .*/scatter_ports 5/' \
	-e 's/^port_shifting .*/port_shifting TRUE/' \
	-e 's|^ids_guid_file .*|ids_guid_file /etc/opensm/ids|' \
	-e 's|^port_prof_ignore_file .*|port_prof_ignore_file /etc/opensm/prof-ignore|' \
	-e 's|^guid_routing_order_file .*|guid_routing_order_file /etc/opensm/order|' \
	-e 's/^guid_routing_order_no_scatter .*/guid_routing_order_no_scatter TRUE/' \
	"$WORK/opensm.conf" >"$WORK/tuned.conf"
"$IBSMD" --import-opensm "$WORK/tuned.conf" >"$WORK/tuned.yaml" 2>"$WORK/tuned.err" ||
	fail "the tuned file does not import: $(cat "$WORK/tuned.err")"
fates "$WORK/tuned.conf" "$WORK/tuned.yaml" >"$WORK/fates.out" ||
	fail "options of the tuned file without a fate: $(cat "$WORK/fates.out")"
"$IBSMD" --config "$WORK/tuned.yaml" --dump-config >"$WORK/tuned.dump" 2>&1 ||
	fail "--dump-config of the tuned YAML: $(cat "$WORK/tuned.dump")"
for kv in 'head_of_queue_lifetime: 0x14' 'leaf_head_of_queue_lifetime: 0x10' \
	'leaf_vl_stall_count: 5' 'vl_stall_count: 7' 'packet_life_time: 0x13' \
	'sm_poll_interval_ms: 2000' 'link_width_enabled: 2' 'link_speed_enabled: 3' \
	'scatter_ports: 5' 'port_shifting: true' 'ids_guid_file: "/etc/opensm/ids"' \
	'port_prof_ignore_file: "/etc/opensm/prof-ignore"' \
	'guid_routing_order_file: "/etc/opensm/order"' 'guid_routing_order_no_scatter: true'; do
	grep -q "^$kv\$" "$WORK/tuned.dump" || fail "not carried over: $kv: $(grep -i 'life\|stall' "$WORK/tuned.dump")"
done
for key in keep_pkey_indexes; do
	line=$(grep -n "^$key " "$WORK/tuned.conf" | cut -d: -f1)
	grep -q "warning: $WORK/tuned.conf:$line: $key " "$WORK/tuned.err" ||
		fail "no warning for $key at line $line: $(cat "$WORK/tuned.err")"
done
grep -q 'force_link' "$WORK/tuned.err" && fail "force_link_* warned about: $(cat "$WORK/tuned.err")"
grep -q 'warning(s) above: settings ibsmd cannot honour' "$WORK/tuned.err" ||
	fail "no summary: $(cat "$WORK/tuned.err")"
echo "a tuned file: buffers, link speed and width, a tuned poll and the balancing knobs carried over (--dump-config), keep_pkey_indexes FALSE warned by line: ok"
