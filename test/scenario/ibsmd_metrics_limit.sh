#!/usr/bin/env bash
# The metrics endpoint under one greedy address: a client at 127.0.0.1 opens 16 connections
# (the endpoint's whole capacity) and holds them, sending nothing. Only metrics_per_address
# (the default, 8) stay open, the rest are closed at once; meanwhile a scrape from another
# address (127.0.0.2, loopback too) gets the metrics, and once the hog lets go, so does
# 127.0.0.1. The closed ones are logged. With all 16 held from two addresses, a scrape from a
# third waits for one to end instead of being reset. A lower metrics_per_address (3) holds
# the hog to 3. Other methods than GET and HEAD get 405, with a body or without.
# Usage: ibsmd_metrics_limit.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_fabricsim "fattree:radix=4,levels=2"

# hog PER: 16 idle connections from 127.0.0.1; PER of them must stay open while a scrape
# from 127.0.0.2 is answered; then a scrape from 127.0.0.1 once they are closed
hog() {
	python3 - "$PORT" "$1" "$(slow_ms 10)" <<'PY'
import socket, sys, time
port, per, wait_ms = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def get(src):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
    s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return data

def alive(s):
    s.setblocking(False)
    try:
        return s.recv(1) != b""  # b"": closed by the server
    except BlockingIOError:
        return True
    except ConnectionError:
        return False

hogs = []
for _ in range(16):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.1", 0))
    hogs.append(s)
    time.sleep(0.02)  # one at a time, as the daemon's loop takes them
# the daemon closes those over the limit: looked at until it has
end = time.monotonic() + wait_ms / 1000
while sum(alive(s) for s in hogs) > per and time.monotonic() < end:
    time.sleep(0.05)
# a scrape from another address, accepted after the 16 (the kernel queues in order), is
# answered once the daemon has taken them all: no more closed after that
other = get("127.0.0.2")
if b"200 OK" not in other.split(b"\r\n")[0] or b"ibsmd_subnet_up" not in other:
    sys.exit(f"a scrape from 127.0.0.2 beside the hog: {other[:200]!r}")
open_ = sum(alive(s) for s in hogs)
if open_ != per:
    sys.exit(f"{open_} of 16 connections from one address stay open, not {per}")
for s in hogs:
    s.close()
# at once: the daemon reads the closes before it counts the next connection against them
again = get("127.0.0.1")
if b"ibsmd_subnet_up" not in again:
    sys.exit(f"a scrape from 127.0.0.1 after the hog: {again[:200]!r}")
print(f"16 from one address: {per} kept, {16 - per} closed; 127.0.0.2 scraped meanwhile: ok")
PY
}

SIM_HOST=host-1 start_ibsmd --config <(printf 'metrics_listen: "127.0.0.1:%s"\nsweep_interval: 0\n' "$PORT")
wait_until 10 grep -q "serving Prometheus metrics" "$WORK/ibsmd.log" || fail "no HTTP endpoint"
# other methods, with a body or without, get 405 (not a closed connection)
for m in "POST --data-binary x=1" DELETE; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -X $m "http://127.0.0.1:$PORT/metrics") || true
	[ "$code" = 405 ] || fail "$m /metrics: $code, not 405"
done
hog 8 || fail "metrics_per_address 8 (the default)"
grep -q "metrics: connection from 127.0.0.1 closed at once: that address holds 8 already (metrics_per_address)" \
	"$WORK/ibsmd.log" || fail "the refused connections are not logged"

# full: 127.0.0.1 and 127.0.0.2 hold 8 connections each, all 16; a scrape from 127.0.0.3
# waits (in the kernel's backlog, neither reset nor answered) until one of them ends
python3 - "$PORT" "$BUILD/cli/ibsa" "$WORK/control" <<'PY' || fail "a scrape while every connection is held"
import socket, subprocess, sys, time
port, ibsa, control = int(sys.argv[1]), sys.argv[2], sys.argv[3]
hogs = []
for src in ("127.0.0.1", "127.0.0.2"):
    for _ in range(8):
        hogs.append(socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0)))
        time.sleep(0.02)
s = socket.create_connection(("127.0.0.1", port), timeout=8, source_address=("127.0.0.3", 0))
s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
# two answers on the control socket: the daemon's loop has turned since the scrape came, and
# would have answered or closed it had it taken it
for _ in range(2):
    subprocess.run([ibsa, "--control", control, "status"], check=True, stdout=subprocess.DEVNULL)
s.setblocking(False)
try:
    early = s.recv(100, socket.MSG_PEEK)
    sys.exit(f"with all 16 held, a scrape from 127.0.0.3 ended at once: {early!r}")
except BlockingIOError:
    pass  # nothing yet: it waits
except ConnectionError as e:
    sys.exit(f"with all 16 held, a scrape from 127.0.0.3 was reset: {e!r}")
s.settimeout(8)
hogs.pop().close()
data = b""
try:
    while chunk := s.recv(65536):
        data += chunk
except OSError as e:
    data += repr(e).encode()
if b"ibsmd_subnet_up" not in data:
    sys.exit(f"the waiting scrape, once a connection ended: {data[:100]!r}")
for s in hogs:
    s.close()
print("all 16 held: a scrape from a third address waited and was answered when one ended: ok")
PY
stop_pids "$IBSMD_PID"

SIM_HOST=host-1 start_ibsmd --config <(printf 'metrics_listen: "127.0.0.1:%s"\nmetrics_per_address: 3\nsweep_interval: 0\n' "$PORT")
wait_until 10 grep -q "serving Prometheus metrics" "$WORK/ibsmd.log" || fail "no HTTP endpoint"
hog 3 || fail "metrics_per_address 3"
