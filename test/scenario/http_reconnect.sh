#!/usr/bin/env bash
# HTTP clients reconnecting while the daemon's loop is busy (a long routing run, a loaded
# machine): an orchestrator's workers each close their last connection and open the next.
# With the partition API (HTTPS, Basic auth; 16 connections per address) and the metrics
# endpoint (plain HTTP; metrics_per_address 8), clients hold all but two of an address's
# connections, answered and kept alive; the daemon is stopped, the clients close them and
# open as many new ones, the daemon goes on: every new connection is answered, as the closed
# ones no longer count against the address. (libmicrohttpd accepted before it read the
# closes, and reset these.)
# Usage: http_reconnect.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
API_PORT=$(free_port)
METRICS_PORT=$(free_port)

api_keys

start_fabricsim "fattree:radix=4,levels=2"
start_named_ibsmd A host-1 10 "sweep_interval: 0" "api_listen: \"127.0.0.1:$API_PORT\"" \
	"api_tls_cert: \"$WORK/cert.pem\"" "api_tls_key: \"$WORK/key.pem\"" \
	"api_users_file: \"$WORK/users\"" "metrics_listen: \"127.0.0.1:$METRICS_PORT\""
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
grep -q "serving the partition API" "$WORK/A.log" || fail "no API: $(grep api "$WORK/A.log")"
grep -q "serving Prometheus metrics" "$WORK/A.log" || fail "no metrics endpoint"

"$SCENARIO_DIR/http_reconnect.py" "$API_PORT" "$PID_A" 14 /ufmRest/app/ufm_version \
	--cafile "$WORK/cert.pem" --auth ib-kubernetes:k8s-secret || fail "the partition API"
"$SCENARIO_DIR/http_reconnect.py" "$METRICS_PORT" "$PID_A" 6 /metrics || fail "the metrics endpoint"
kill -0 "$PID_A" || fail "the daemon died"
echo PASS
