#!/usr/bin/env bash
# fabricsim's packed datagrams, the rules of the emulation checked from a client of its own
# (Python, speaking the ibsim wire protocol, not ibsmd's transport): a client that does not
# ask (as ibsim's clients, which know nothing of it) gets one MAD to a datagram, and a
# datagram of two MADs from it is dropped with a warning; one that asks in its connect
# message gets the agreed count back, may send up to that many MADs in one datagram, and has
# every one answered in order, packed; a datagram of more than agreed, or of a size that is
# not a whole number of MAD messages, is dropped and said. Then ibsmd's sim transport uses
# it and a fabric comes up, verified.
# Usage: fabricsim_packed.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=8,levels=2"
python3 - "$IBSIM_SOCKNAME" <<'PY' || fail "the packed protocol's rules"
import os, socket, struct, sys, time
base = sys.argv[1]
REQ, PACK_ASK, PACK_AGREED = 288, 0x4B505346, 0x6B707366

def name(suffix):
    return b"\0" + f"{base}:{suffix}".encode() + b"\0"

def connect(rid, ask):
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    d.bind(name(f"in{rid}"))  # before the connect: fabricsim connects to it
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ctl.bind(name(f"ctl{rid}"))
    ctl.connect(name("ctl"))
    data = bytearray(64)
    struct.pack_into("<III", data, 0, rid, 0, 0)
    data[12:12 + 6] = b"host-1"
    if ask:
        struct.pack_into("<II", data, 48, PACK_ASK, ask)
    ctl.send(struct.pack("<IIII", 0xDEADBEEF, 0, 1, 64) + bytes(data))
    ctl.settimeout(5)
    msg = ctl.recv(80)
    typ = struct.unpack_from("<I", msg, 8)[0]
    assert typ == 1, f"connect refused ({typ})"
    cid = struct.unpack_from("<I", msg, 16)[0]
    magic, agreed = struct.unpack_from("<II", msg, 16 + 48)
    d.connect(name(f"out{cid}"))
    d.settimeout(2)
    return ctl, d, (agreed if magic == PACK_AGREED else 1)

def nodeinfo_get(tid):
    """a directed-route NodeInfo Get of the local node (hop count 0), in a sim_request"""
    mad = bytearray(256)
    mad[0:4] = bytes([1, 0x81, 1, 1])
    struct.pack_into(">Q", mad, 8, tid)
    struct.pack_into(">H", mad, 16, 0x11)
    struct.pack_into(">HH", mad, 32, 0xFFFF, 0xFFFF)
    req = bytearray(REQ)
    struct.pack_into("<I", req, 0, socket.htons(0xFFFF))
    struct.pack_into("<I", req, 4, 0xFFFF)
    struct.pack_into(">Q", req, 24, 256)
    req[32:] = mad
    return bytes(req)

def answers(d, n):
    """n answers, in the datagrams they came in: [(datagram size, [tids])]"""
    got, seen = [], 0
    while seen < n:
        b = d.recv(65536)
        assert len(b) % REQ == 0, f"a {len(b)}-byte datagram"
        tids = []
        for off in range(0, len(b), REQ):
            mad = b[off + 32:off + REQ]
            assert mad[3] == 0x81, f"method {mad[3]:#x}, not GetResp"
            tids.append(struct.unpack_from(">Q", mad, 8)[0] & 0xFFFFFFFFFFFF)
        got.append((len(b), tids))
        seen += len(tids)
    return got

def nothing(d):
    try:
        b = d.recv(65536)
    except socket.timeout:
        return True
    raise AssertionError(f"an answer ({len(b)} bytes) to what should have been dropped")

pid = os.getpid()
# not asked: ibsim's protocol, one MAD to a datagram both ways
ctl, d, k = connect(pid, 0)
assert k == 1, k
for t in (1, 2, 3):
    d.send(nodeinfo_get(t))
got = answers(d, 3)
assert [g[0] for g in got] == [REQ] * 3 and [g[1] for g in got] == [[1], [2], [3]], got
d.send(nodeinfo_get(4) + nodeinfo_get(5))
assert nothing(d)
print("not asked: one MAD to a datagram, two in one dropped: ok")

# asked for 4: up to 4 to a datagram, in order, answered packed
ctl2, d2, k = connect(pid + (1 << 22), 4)
assert k == 4, k
d2.send(b"".join(nodeinfo_get(t) for t in (10, 11, 12)))
got = answers(d2, 3)
assert [t for g in got for t in g[1]] == [10, 11, 12], got
assert any(len(g[1]) > 1 for g in got), f"answers not packed: {got}"
assert all(len(g[1]) <= 4 for g in got), got
d2.send(b"".join(nodeinfo_get(t) for t in range(20, 25)))  # 5: more than agreed
assert nothing(d2)
d2.send(nodeinfo_get(30)[:200])  # not a whole MAD message
assert nothing(d2)
d2.send(nodeinfo_get(31))  # one alone still goes
assert [t for g in answers(d2, 1) for t in g[1]] == [31]
print("asked for 4: 4 agreed, three in one datagram answered in order and packed; five, "
      "or a part of one, dropped: ok")

# more than fabricsim takes: it agrees to its own most
ctl3, d3, k = connect(pid + (2 << 22), 1000)
assert 1 < k < 1000, k
print(f"asked for 1000: {k} agreed: ok")
PY
grep -q 'dropped a 576-byte message.*1 to a datagram' "$WORK/fabricsim.log" ||
	fail "the dropped pair is not said: $(tail -5 "$WORK/fabricsim.log")"
grep -q 'dropped a 1440-byte message.*4 to a datagram' "$WORK/fabricsim.log" ||
	fail "the dropped five are not said: $(tail -5 "$WORK/fabricsim.log")"
grep -q 'dropped a 200-byte message' "$WORK/fabricsim.log" ||
	fail "the partial message is not said: $(tail -5 "$WORK/fabricsim.log")"
echo "each drop said in fabricsim's log: ok"

start_ibsmd
verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]'
echo "ibsmd through packed datagrams: the fabric up and verified: ok"
