#!/usr/bin/env bash
# A site's Prometheus, pointed at ibsmd instead of infiniband_exporter, on a 2,592-host fat
# tree (12,960 switch ports) with metrics_ports: all: the recording and alerting rules of
# the exporter's example shapes (prometheus/infiniband.rules.yml: rate, irate and delta of
# every switch port counter joined on guid and port to infiniband_switch_uplink_info, sums
# per switch, alerts on the collector's errors and timeouts) run on ibsmd's series:
# - promtool check rules accepts the file; Prometheus (Debian's) scrapes every series;
# - every rule evaluates: one recorded series per linked switch port, named with its switch
#   and its far end as fabricsim cables it;
# - symbol errors and link downs fabricsim raises on a port are in the scraped series as
#   perfquery reads them, and the delta rule sees them on that port only;
# - a host whose PortCounters go unanswered (its link drops every MAD) fires
#   InfinibandExporterCollectTimeouts for the hca collector, which resolves when it answers;
# - promtool test rules, on two of ibsmd's scrapes of one leaf's ports laid five minutes
#   apart: delta, rate and irate of the raised counters are exactly perfquery's before and
#   after (delta, /300, /60), every other port's exactly the scrapes', and the timeout alert
#   fires from the scraped collector series.
# Usage: ibsmd_exporter_rules.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need perfquery
need prometheus
need promtool
FS="$BUILD/test/fabricsim/fabricsim"
RULES="$SCENARIO_DIR/prometheus/infiniband.rules.yml"
PORT=$((20000 + $$ % 20000))
PPORT=$((PORT + 1))
promtool check rules "$RULES" >"$WORK/check.out" 2>&1 || fail "promtool check rules: $(cat "$WORK/check.out")"

start_fabricsim "fattree:radix=36,levels=3,hosts=2592"
SIM_HOST=host-1 IBSMD_UP_TIMEOUT=120 start_ibsmd --config <(printf \
	'pm_interval: 5\nsweep_interval: 0\nmetrics_ports: all\nmetrics_max_ports: 20000\nmetrics_listen: "127.0.0.1:%s"\n' "$PORT")
scrape() { curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/$1.prom"; }
pm_sweeps() { status_field 's["pm"]["sweeps"]'; }
pm_sweeps_reach() { [ "$(pm_sweeps)" -ge "$1" ]; }
wait_until 60 pm_sweeps_reach 1 || fail "the PM did not sweep"

cat >"$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 5s
  evaluation_interval: 10s
rule_files: ["$RULES"]
scrape_configs:
  - job_name: ibsmd
    scrape_timeout: 5s
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
YML
(cd "$WORK" && exec prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$WORK/prometheus.log" 2>&1) &
PIDS+=($!)
# query EXPR: the instant vector as "labels-as-json value" lines, sorted
query() {
	curl -sf --data-urlencode "query=$1" "http://127.0.0.1:$PPORT/api/v1/query" |
		/usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
for x in sorted(r, key=lambda x: sorted(x["metric"].items())):
    m = {k: v for k, v in x["metric"].items() if k not in ("job", "instance")}
    print(json.dumps(m, sort_keys=True), x["value"][1])' 2>/dev/null || true
}
value_of() { query "$1" | awk 'NR == 1 { print $NF }'; }
is() { [ "$(value_of "$1")" = "$2" ]; }
wait_until 60 is 'up{job="ibsmd"}' 1 || fail "Prometheus does not scrape ibsmd: $(tail -5 "$WORK/prometheus.log")"

# the cabling: every linked switch port, with its switch and far end
scrape a || fail "no metrics on $PORT"
links=$(grep -c '^infiniband_switch_uplink_info{' "$WORK/a.prom")
[ "$links" = 12960 ] || fail "ibsmd publishes $links switch uplink_info series, want 12960 (every linked switch port)"
recorded() { [ "$(value_of "count($1)")" = "$links" ]; }
for r in transmit_data_bytes:rate5m receive_packets:irate5m symbol_error:delta5m transmit_wait:rate5m \
	multicast_receive_packets:rate5m link_downed:irate5m; do
	wait_until 240 recorded "infiniband:switch_port_$r" ||
		fail "infiniband:switch_port_$r: $(value_of "count(infiniband:switch_port_$r)") series, want $links"
done
[ -z "$(query 'infiniband:switch_port_qp1_dropped:delta5m')" ] ||
	fail "qp1_dropped recorded, though ibsmd publishes no such counter"
n=$(grep -c '^- record:\|^      - record:' "$RULES")
names() { is 'count(count by (__name__) ({__name__=~"infiniband:.*"}))' $((n - 3)); }
wait_until 240 names ||
	fail "recorded names: $(value_of 'count(count by (__name__) ({__name__=~"infiniband:.*"}))'), want $((n - 3)) (every rule but qp1_dropped's)"
query 'infiniband:switch_port_transmit_data_bytes:rate5m' >"$WORK/joined.txt"
python3 - "$WORK/a.prom" "$WORK/joined.txt" <<'PY' || fail "the joined labels"
import json, re, sys
up = {}
for l in open(sys.argv[1]):
    m = re.match(r'infiniband_switch_uplink_info\{(.*)\} ', l)
    if m:
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        up[(lab["guid"], lab["port"])] = (lab["switch"], lab["uplink"], lab["uplink_port"])
seen = 0
for l in open(sys.argv[2]):
    lab = json.loads(l.rsplit(" ", 1)[0])
    assert up[(lab["guid"], lab["port"])] == (lab["switch"], lab["uplink"], lab["uplink_port"]), lab
    seen += 1
assert seen == len(up), (seen, len(up))
PY
echo "Prometheus scrapes ibsmd; every rule records one series per linked switch port ($links), named with its switch and far end: ok"

# errors raised on one leaf's uplink: perfquery's figures, in the scraped series and the rule
leaf=leaf-1-1
lg=$(sed -n "s/^infiniband_switch_info{guid=\"\(0x[0-9a-f]*\)\",switch=\"$leaf\".*/\1/p" "$WORK/a.prom")
[ -n "$lg" ] || fail "no infiniband_switch_info for $leaf"
llid=$(lid_of "$leaf")
P=20
perf() { on_sim host-9 perfquery "$llid" "$P" | sed -n "s/^$1:\.*\([0-9]*\)\$/\1/p"; }
s0=$(perf SymbolErrorCounter) d0=$(perf LinkDownedCounter)
scrape before || fail "scrape"
"$FS" ctl errors "$leaf" "$P" symbol_errors 7 >/dev/null || fail "ctl errors"
"$FS" ctl errors "$leaf" "$P" link_downed 2 >/dev/null || fail "ctl errors"
s1=$(perf SymbolErrorCounter) d1=$(perf LinkDownedCounter)
[ "$((s1 - s0))" = 7 ] && [ "$((d1 - d0))" = 2 ] || fail "perfquery: symbol errors $s0 -> $s1, link downs $d0 -> $d1"
sel="guid=\"$lg\",port=\"$P\""
wait_until 30 is "infiniband_switch_port_symbol_error_total{$sel}" "$s1" ||
	fail "Prometheus's symbol errors of $leaf port $P: $(value_of "infiniband_switch_port_symbol_error_total{$sel}"), perfquery $s1"
is "infiniband_switch_port_link_downed_total{$sel}" "$d1" ||
	fail "Prometheus's link downs: $(value_of "infiniband_switch_port_link_downed_total{$sel}"), perfquery $d1"
scrape after || fail "scrape"
raised() { [ "$(query 'infiniband:switch_port_symbol_error:delta5m > 0' | wc -l)" = 1 ]; }
wait_until 240 raised || fail "the delta rule: $(query 'infiniband:switch_port_symbol_error:delta5m > 0')"
query 'infiniband:switch_port_symbol_error:delta5m > 0' | grep -q "\"guid\": \"$lg\", \"port\": \"$P\", \"switch\": \"$leaf\"" ||
	fail "the delta rule names another port: $(query 'infiniband:switch_port_symbol_error:delta5m > 0')"
echo "symbol errors and link downs of $leaf port $P: in Prometheus as perfquery reads them ($s1, $d1), the delta rule on that port only: ok"

# a host whose PortCounters go unanswered: the collector's timeout alert fires, then resolves
alerts() {
	curl -sf "http://127.0.0.1:$PPORT/api/v1/alerts" | /usr/bin/python3 -c 'import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    print(a["labels"]["alertname"], a["labels"].get("collector"), a["state"])' 2>/dev/null || true
}
firing() { alerts | grep -qx "InfinibandExporterCollectTimeouts hca firing"; }
quiet() { [ -z "$(alerts)" ]; }
quiet || fail "alerts before any fault: $(alerts)"
"$FS" ctl drop 100 host-77 1 >/dev/null || fail "ctl drop"
wait_until 60 firing || fail "no timeout alert: $(alerts); collect_timeouts $(value_of 'infiniband_exporter_collect_timeouts{collector="hca"}')"
scrape timeouts || fail "scrape"
"$FS" ctl drop 0 host-77 1 >/dev/null || fail "ctl drop"
wait_until 60 quiet || fail "the alert did not resolve: $(alerts)"
echo "host-77's counters unanswered: InfinibandExporterCollectTimeouts fired for hca, resolved when it answered: ok"
stop_pids "${PIDS[@]: -1}"

# exact values: promtool test rules on the leaf's series from two scrapes five minutes apart
/usr/bin/python3 - "$RULES" "$WORK" "$lg" "$P" "$((s1 - s0))" "$((d1 - d0))" >"$WORK/test.yml" <<'PY' || fail "the promtool test"
import re, sys
rules, work, guid, port, dsym, ddown = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
def read(name):
    out = {}
    for l in open(f"{work}/{name}.prom"):
        m = re.match(r'((infiniband_switch_port_[a-z_]+_total|infiniband_switch_uplink_info|infiniband_exporter_collect_timeouts)\{(.*)\}) (\S+)$', l)
        if m and (m.group(3).startswith(f'guid="{guid}",') or m.group(2) == "infiniband_exporter_collect_timeouts"):
            out[m.group(1)] = float(m.group(4))
    return out
a, b, t = read("before"), read("after"), read("timeouts")
assert len(a) > 36 * 21 and set(a) == set(b), (len(a), len(b))
def fmt(v):
    return repr(int(v)) if v == int(v) else repr(v)
up = {}
for s in a:
    if s.startswith("infiniband_switch_uplink_info"):
        lab = dict(re.findall(r'(\w+)="([^"]*)"', s))
        up[lab["port"]] = lab
print(f"rule_files: [{rules}]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:")
for s in sorted(a):
    vals = [a[s]] * 5 + [b[s]]
    if s.startswith("infiniband_exporter_collect_timeouts"):
        vals = [a[s]] * 3 + [t[s]] * 3
    print(f"      - series: '{s}'\n        values: '{' '.join(fmt(v) for v in vals)}'")
print("    promql_expr_test:")
for fam, want in (("symbol_error", dsym), ("link_downed", ddown)):
    for fn, div in (("delta", 1), ("rate", 300), ("irate", 60)):
        name = f"infiniband:switch_port_{fam}:{fn}5m"
        print(f"      - expr: '{name}'\n        eval_time: 5m\n        exp_samples:")
        for p, lab in sorted(up.items(), key=lambda x: int(x[0])):
            s = f'infiniband_switch_port_{fam}_total{{guid="{guid}",port="{p}"}}'
            v = (want if p == port else b[s] - a[s]) / div
            if p == port:
                assert b[s] - a[s] == want, (fam, b[s] - a[s], want)  # the scrapes agree with perfquery
            print(f"          - labels: '{name}{{guid=\"{guid}\",port=\"{p}\",switch=\"{lab['switch']}\",uplink=\"{lab['uplink']}\",uplink_port=\"{lab['uplink_port']}\"}}'\n            value: {fmt(v)}")
timed_out = [s for s in t if 'collector="hca"' in s and t[s] > 0]
assert timed_out, t
print("    alert_rule_test:\n      - eval_time: 5m\n        alertname: InfinibandExporterCollectTimeouts\n        exp_alerts:")
for s in sorted(timed_out):
    print(f"          - exp_labels: {{severity: warning, collector: hca}}\n            exp_annotations:\n              summary: '{fmt(t[s])} ports did not answer the hca collector'")
PY
promtool test rules "$WORK/test.yml" >"$WORK/promtool.out" 2>&1 || fail "promtool test rules: $(head -40 "$WORK/promtool.out")"
grep -q SUCCESS "$WORK/promtool.out" || fail "promtool: $(cat "$WORK/promtool.out")"
echo "promtool test rules on $leaf's scraped series: delta, rate and irate of the raised counters exactly perfquery's; the timeout alert from the scraped collector: ok"
echo "PASS"
