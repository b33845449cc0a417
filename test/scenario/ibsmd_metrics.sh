#!/usr/bin/env bash
# Metrics and status on the 2,592-host fat tree, from outside: the metrics file (what
# node_exporter's textfile collector reads) and the HTTP endpoint both parse as Prometheus
# text (python3-prometheus-client's parser) and report 2,592 CAs, 612 switches, every LID,
# MASTER and the subnet up; metrics_max_ports holds the per-port series to 200 ports and
# counts the others; an SA query shows in the per-attribute counters; "ibsa status
# --json" reports the same fabric. The file is replaced whole (no temporary left behind).
# A metrics_listen that cannot be used is logged and the daemon runs on.
# Usage: ibsmd_metrics.sh BUILD_DIR [FABRIC]
. "$(dirname "$0")/lib.sh"
need curl
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	fail "python3-prometheus-client is not installed (the README's test command installs it)"
FABRIC=${2:-fattree:radix=36,levels=3,hosts=2592}
IBSA="$BUILD/cli/ibsa"
PORT=$((20000 + $$ % 20000))
export IBSMD_UP_TIMEOUT=240 # 2,592 hosts under ASan beside other tests

start_fabricsim "$FABRIC"
SIM_HOST=host-9 start_ibsmd --config <(printf 'metrics_interval: 1\nmetrics_listen: "127.0.0.1:%s"\nsweep_interval: 0\nmetrics_max_ports: 200\n' "$PORT")
ncas=$("$BUILD/test/fabricsim/fabricsim" ctl lids | grep -c "host-") || true
nlids=$("$BUILD/test/fabricsim/fabricsim" ctl lids | wc -l)

# check_metrics FILE: parse and compare with the fabric
check_metrics() {
	/usr/bin/python3 - "$1" "$ncas" "$nlids" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def val(name, **labels):
    for s in fams[name].samples:
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise SystemExit(f"no {name} {labels}")
cas, lids = int(sys.argv[2]), int(sys.argv[3])
assert val("ibsmd_nodes", type="ca") == cas, val("ibsmd_nodes", type="ca")
assert val("ibsmd_nodes", type="switch") > 0
assert val("ibsmd_lids") == lids, (val("ibsmd_lids"), lids)
assert val("ibsmd_sm_state", state="master") == 1
assert val("ibsmd_subnet_up") == 1
assert val("ibsmd_sweeps") >= 1  # the parser drops _total from counter names
assert val("ibsmd_sweep_phase_seconds", phase="total") > 0
assert val("ibsmd_mads_sent") > 0
for k in ("aborted", "reclaimed", "refused"):
    assert val(f"ibsmd_rmpp_{k}") >= 0
# metrics_max_ports bounds the per-port series: 200 switch ports, the rest counted
assert len(fams["infiniband_switch_uplink_info"].samples) == 200
assert len(fams["ibsmd_port_state"].samples) == 200
assert val("ibsmd_metrics_ports_left_out") > 1000
print(int(val("ibsmd_sa_answers", attribute="PathRecord", status="ok")),
      int(val("ibsmd_rmpp_transfers", direction="sent")))
PY
}
wait_until 30 test -s "$WORK/state/ibsmd.prom" || fail "no metrics file"
# a write after the subnet came up: the file says so
wait_until 30 check_metrics "$WORK/state/ibsmd.prom" >/dev/null ||
	fail "the metrics file does not show the subnet: $(check_metrics "$WORK/state/ibsmd.prom" 2>&1 | tail -3)"
before=$(check_metrics "$WORK/state/ibsmd.prom") || fail "the metrics file: $(head -20 "$WORK/state/ibsmd.prom")"
echo "metrics file: $ncas CAs, $nlids LIDs, MASTER, subnet up; it parses as Prometheus text: ok"

"$IBSA" --transport sim --sim-node host-1 paths "host-1 HCA-1" "host-2 HCA-1" >/dev/null || fail "ibsa paths"
# a table of every node: an RMPP transfer the SA sends
"$IBSA" --transport sim --sim-node host-1 nodes >/dev/null || fail "ibsa nodes"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/http.prom" || fail "no HTTP endpoint on $PORT"
after=$(check_metrics "$WORK/http.prom") || fail "the HTTP metrics"
read -r paths0 rmpp0 <<<"$before"
read -r paths1 rmpp1 <<<"$after"
[ "$paths1" -gt "$paths0" ] || fail "PathRecord answers: $paths0, then $paths1"
[ "$rmpp1" -gt "$rmpp0" ] || fail "RMPP transfers sent: $rmpp0, then $rmpp1 after ibsa nodes"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/other")
[ "$code" = 404 ] || fail "/other answered $code"
echo "HTTP /metrics: the same fabric; PathRecord answers $paths0 -> $paths1, RMPP transfers sent $rmpp0 -> $rmpp1; other paths 404: ok"

"$IBSA" --control "$WORK/control" --json status >"$WORK/status.json" || fail "ibsa status"
python3 - "$WORK/status.json" "$ncas" "$nlids" <<'PY' || fail "status: $(cat "$WORK/status.json")"
import json, sys
r = json.load(open(sys.argv[1]))
s = r["subnet"]
assert r["state"] == "MASTER" and s["up"] and s["cas"] == int(sys.argv[2]) and s["lids"] == int(sys.argv[3]), s
assert r["sa"]["requests"] >= 1 and r["sweeps"]["last"]["total"] > 0, r
PY
echo "ibsa status --json: MASTER, $ncas CAs, $nlids LIDs: ok"

# a listen address that cannot be had: logged, the daemon runs on
# the file is written every second through a temporary that is renamed over it, so the
# temporary exists for moments while the daemon runs; once it has stopped none is left
stop_pids "$IBSMD_PID"
ls -A "$WORK/state" | has ".ibsmd.prom.tmp" && fail "a temporary metrics file is left behind"
[ -s "$WORK/state/ibsmd.prom" ] || fail "the metrics file is gone after a clean stop"
echo "after a clean stop: the metrics file whole, no temporary left: ok"
printf 'metrics_listen: "no-such-host.invalid:80"\nsweep_interval: 0\n' >"$WORK/bad.yaml"
SIM_HOST=host-9 start_ibsmd --config "$WORK/bad.yaml"
grep -q 'metrics.*no-such-host.invalid:80.*no HTTP endpoint' "$WORK/ibsmd.log" ||
	fail "a bad metrics_listen is not reported: $(grep metrics "$WORK/ibsmd.log")"
kill -0 "$IBSMD_PID" || fail "ibsmd died of a bad metrics_listen"
echo "a metrics_listen that cannot be used: reported, the subnet up all the same: ok"
