#!/usr/bin/env bash
# ibsmd's metrics as infiniband_exporter publishes them, from outside, on a fat tree with
# metrics_ports: all. The endpoint parses as Prometheus text, and:
# - every linked port of every switch and HCA has the exporter's counter families, labelled
#   guid and port (a switch's node GUID, an HCA's port GUID), and exactly one *_uplink_info
#   series to join them on (the exporter's recording rules: * on(guid,port)
#   group_left(switch, uplink, uplink_port) infiniband_switch_uplink_info), whose uplink,
#   uplink_port and uplink_type are the far end fabricsim's cabling has;
# - one infiniband_switch_info per switch, one infiniband_hca_info per HCA port, LIDs as
#   fabricsim holds them;
# - the values agree with perfquery (infiniband-diags) on the simulator: symbol errors
#   fabricsim raised, exactly (and XmitWait as raised); data bytes (4 x PortXmitData)
#   between a perfquery read before the PM's sweep and one after;
# - the rate is the lanes times one lane's rate, as ibsmd_port_width_lanes and
#   ibsmd_port_speed_gbps give them; ibsmd_port_state is ACTIVE (4);
# - the exporter's collector series are there for the alert rules;
# - the Grafana dashboard in packaging/ loads as JSON and every metric it asks for is one
#   ibsmd publishes.
# Usage: ibsmd_exporter.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need perfquery
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	fail "python3-prometheus-client is not installed (the README's test command installs it)"
FS="$BUILD/test/fabricsim/fabricsim"
PORT=$((20000 + $$ % 20000))
SPEC="fattree:radix=8,levels=2"
"$FS" dump "$SPEC" >"$WORK/fabric.net"
start_fabricsim "$SPEC"
SIM_HOST=host-1 start_ibsmd --config <(printf 'pm_interval: 1\nsweep_interval: 0\nmetrics_ports: all\nmetrics_listen: "127.0.0.1:%s"\n' "$PORT")
pm_sweeps() { status_field 's["pm"]["sweeps"]'; }
pm_sweeps_reach() { [ "$(pm_sweeps)" -ge "$1" ]; }
scrape() { curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/$1.prom"; }

"$FS" ctl errors spine-1 2 symbol_errors 7 >/dev/null || fail "ctl errors"
"$FS" ctl errors spine-1 2 xmit_wait 1234 >/dev/null || fail "ctl errors"
"$FS" ctl errors host-3 1 symbol_errors 3 >/dev/null || fail "ctl errors"
lid=$(lid_of spine-1)
xmit() { on_sim host-5 perfquery -x "$lid" 2 | sed -n 's/^PortXmitData:\.*\([0-9]*\)$/\1/p'; }
n=$(pm_sweeps)
before=$(xmit)
# two sweeps begun after the perfquery read: the last one read the port after it
wait_until 20 pm_sweeps_reach $((n + 2)) || fail "the PM does not sweep: $(pm_sweeps)"
scrape m || fail "no metrics on $PORT"
after=$(xmit)
on_sim host-5 perfquery "$lid" 2 >"$WORK/perfquery.txt" || fail "perfquery"
ca_guid=$("$FS" ctl lids | awk '$4 == "host-3" { print $1 }')
[ -n "$before" ] && [ -n "$after" ] || fail "perfquery PortXmitData: '$before' '$after'"

/usr/bin/python3 - "$WORK/m.prom" "$WORK/fabric.net" "$before" "$after" "$ca_guid" <<'PY' || fail "the exporter's series (above)"
import re, sys
from prometheus_client.parser import text_string_to_metric_families
prom, net, before, after, ca_guid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
fams = {f.name: f for f in text_string_to_metric_families(open(prom).read())}
def series(name):
    return fams[name].samples if name in fams else []
def one(name, **lab):
    s = [x for x in series(name) if all(x.labels.get(k) == v for k, v in lab.items())]
    assert len(s) == 1, (name, lab, len(s))
    return s[0]
# the cabling: node name -> type, guid, description; (name, port) -> (far name, far port)
nodes, links, cur = {}, {}, None
for l in open(net):
    m = re.match(r'(switchguid|caguid)=(0x[0-9a-f]+)', l)
    if m:
        g = m.group(2)
    m = re.match(r'(Switch|Ca)\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"', l)
    if m:
        cur = m.group(2)
        nodes[cur] = (m.group(1), g, m.group(3))
    m = re.match(r'\[(\d+)\](?:\([0-9a-fx]+\))?\s+"([^"]+)"\[(\d+)\]', l)
    if m and cur:
        links[(cur, int(m.group(1)))] = (m.group(2), int(m.group(3)))
sw = {n for n, (t, _, _) in nodes.items() if t == "Switch"}
cas = {n for n, (t, _, _) in nodes.items() if t == "Ca"}
desc = {n: d for n, (_, _, d) in nodes.items()}
by_desc = {d: n for n, d in desc.items()}
# every linked port has each counter family, and one uplink_info to join on
for fam, kind, names in (("switch", "switch", sw), ("hca", "hca", cas)):
    up = series(f"infiniband_{fam}_uplink_info")
    want = {(a, p) for (a, p) in links if a in names}
    got = {(by_desc[s.labels[kind]], int(s.labels["port"])) for s in up}
    assert got == want, (fam, sorted(want - got)[:3], sorted(got - want)[:3])
    keys = {(s.labels["guid"], s.labels["port"]) for s in up}
    assert len(keys) == len(up), "two uplink_info series for one guid and port"
    for s in up:
        far, fport = links[(by_desc[s.labels[kind]], int(s.labels["port"]))]
        assert s.labels["uplink"] == desc[far] and int(s.labels["uplink_port"]) == fport, s
        assert s.labels["uplink_type"] == ("SW" if far in sw else "CA"), s
    for c in ("transmit_data_bytes", "receive_data_bytes", "transmit_packets", "receive_packets",
              "symbol_error", "link_downed", "transmit_discards", "transmit_wait",
              "unicast_transmit_packets", "multicast_receive_packets"):
        name = f"infiniband_{fam}_port_{c}"  # the parser drops _total
        have = {(s.labels["guid"], s.labels["port"]) for s in series(name)}
        assert have == keys, (name, len(have), len(keys))
assert len(series("infiniband_switch_info")) == len(sw), len(series("infiniband_switch_info"))
assert len(series("infiniband_hca_info")) == len(cas)
sp = nodes["spine-1"][1]
assert one("infiniband_switch_port_symbol_error", guid=sp, port="2").value == 7
assert one("infiniband_switch_port_transmit_wait", guid=sp, port="2").value == 1234
assert one("infiniband_hca_port_symbol_error", guid=ca_guid, port="1").value == 3
x = one("infiniband_switch_port_transmit_data_bytes", guid=sp, port="2").value
assert 4 * before <= x <= 4 * after, (before, x, after)
for s in series("infiniband_switch_port_rate_bytes_per_second"):
    lab = dict(guid=s.labels["guid"], port=s.labels["port"])
    lanes = one("ibsmd_port_width_lanes", **lab).value
    gbps = one("ibsmd_port_speed_gbps", **lab).value
    assert lanes > 0 and abs(s.value - lanes * gbps * 1e9 / 8) < 1, (s, lanes, gbps)
    assert one("ibsmd_port_state", **lab).value == 4
for c in ("switch", "hca"):
    for k in ("collect_errors", "collect_timeouts", "collector_duration_seconds"):
        one(f"infiniband_exporter_{k}", collector=c)
print(len(series("infiniband_switch_uplink_info")), len(series("infiniband_hca_uplink_info")), x)
PY
# (perfquery prints PortXmitWait only from a port whose ClassPortInfo says it counts it)
grep -q "SymbolErrorCounter:\.*7$" "$WORK/perfquery.txt" ||
	fail "perfquery does not read what the metrics say: $(grep -E 'Symbol' "$WORK/perfquery.txt")"
echo "infiniband_exporter's families for every linked port, joined by uplink_info on the cabling; errors, XmitWait and data as perfquery reads them: ok"

# the dashboard: Grafana's JSON model, every metric it graphs one that ibsmd publishes
python3 - "$SCENARIO_DIR/../../packaging/grafana-ibsmd.json" "$WORK/m.prom" <<'PY' || fail "the dashboard (above)"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d.get("schemaVersion") and d.get("panels") and d.get("title"), "not a dashboard model"
published = set(re.findall(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]', open(sys.argv[2]).read(), re.M))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
assert len(exprs) >= 8, len(exprs)
words = {"by", "sum", "rate", "irate", "increase", "max", "min", "avg", "topk", "on", "group_left",
         "without", "delta", "count", "bool", "and", "or", "unless", "le", "instance", "job"}
for e in exprs:
    for name in re.findall(r'\b(ibsmd_[a-z0-9_]+|infiniband_[a-z0-9_]+)\b', e):
        assert name in published, (name, e)
print(len(exprs), "queries")
PY
echo "packaging/grafana-ibsmd.json: a Grafana dashboard whose every query names published metrics: ok"
echo "PASS"
