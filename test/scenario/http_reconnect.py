#!/usr/bin/env python3
"""Clients that reconnect while the daemon is busy: N keep-alive connections are answered,
the daemon is stopped (SIGSTOP, as a long routing run or a loaded machine keeps its loop
busy), the clients close those connections and open N new ones, the daemon goes on
(SIGCONT). Every new connection must be answered: a connection its client closed is not
one the address still holds. Exit status 1 with what was refused.

Usage: http_reconnect.py PORT DAEMON_PID N PATH [--cafile CERT] [--auth USER:PASS]"""
import argparse
import base64
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("pid", type=int)
ap.add_argument("n", type=int)
ap.add_argument("path")
ap.add_argument("--cafile")
ap.add_argument("--auth")
args = ap.parse_args()
ctx = ssl.create_default_context(cafile=args.cafile) if args.cafile else None
auth = ""
if args.auth:
    auth = "Authorization: Basic %s\r\n" % base64.b64encode(args.auth.encode()).decode()
request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (args.path, auth)).encode()


def wrap(raw):
    raw.settimeout(10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1") if ctx else raw


def ask(s):
    """One request on s; the status line once the whole answer is read (it stays open)."""
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer's headers")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    while m and len(body) < int(m.group(1)):
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the answer's body")
        body += chunk
    return head.split(b"\r\n")[0].decode()


def still_open(s):
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return True
    except (ConnectionError, ssl.SSLError):
        return False


old = [wrap(socket.create_connection(("127.0.0.1", args.port))) for _ in range(args.n)]
for s in old:
    status = ask(s)
    if " 200 " not in status + " ":
        sys.exit("before the pause: %s" % status)
time.sleep(0.2)
kept = sum(still_open(s) for s in old)
if kept != args.n:
    sys.exit("only %d of %d answered connections stay open (keep-alive)" % (kept, args.n))

os.kill(args.pid, signal.SIGSTOP)


def state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


for _ in range(500):  # SIGSTOP takes effect a moment later; close only once it has
    if state(args.pid) == "T":
        break
    time.sleep(0.01)
else:
    os.kill(args.pid, signal.SIGCONT)
    sys.exit("the daemon did not stop")
try:
    for s in old:
        s.close()
    raws = [socket.create_connection(("127.0.0.1", args.port), timeout=10) for _ in range(args.n)]
    got = [None] * args.n

    def second(i):
        try:
            got[i] = ask(wrap(raws[i]))
        except (OSError, ssl.SSLError) as e:
            got[i] = repr(e)

    threads = [threading.Thread(target=second, args=(i,)) for i in range(args.n)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # every close and every new connection waits in the kernel meanwhile
finally:
    os.kill(args.pid, signal.SIGCONT)
for t in threads:
    t.join()
bad = [g for g in got if not (g and " 200 " in g + " ")]
if bad:
    sys.exit("%d of %d connections opened while the daemon was busy were refused: %s"
             % (len(bad), args.n, bad[:3]))
print("%d connections closed and %d opened while the daemon was busy: every one answered"
      % (args.n, args.n))
