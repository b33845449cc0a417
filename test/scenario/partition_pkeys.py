#!/usr/bin/env python3
"""The partition load tests' checks (ibsmd_partition_load.sh, api_partitions_load.sh), in one
place so that the control socket's run and the API's hold the ports to the same rule.

The tests change P_Keys 0x0a01-0x0a04 only; other partitions (the default one) are not
theirs and are left out of every comparison.

  partition_pkeys.py hosts STATE PKEYS   every host port holds what STATE says, nothing more
  partition_pkeys.py facing PKEYS PORTS  each switch port facing a host holds the host's keys
  partition_pkeys.py same STATE STATE    two readings of the state agree
  partition_pkeys.py groups STATE SA     the SA's IPoIB broadcast groups are the partitions'

STATE is either `ibsa partition show --json` or the API's
GET /ufmRest/resources/pkeys?guids_data=true (UFM's shape): both are read, so that the ports
are held to what an orchestrator reads back as much as to what the operator does. PKEYS is
`fabricsim ctl pkeys`; PORTS is "HOST `fabricsim ctl port HOST 1`" lines; SA is the SA's
state file.
"""
import json
import sys

LO, HI = 0x0A01, 0x0A04


def ours(pkey):
    return LO <= pkey & 0x7FFF <= HI


def read_state(path):
    """{pkey: (ip_over_ib, {guid: "full"|"limited"})} of the test's partitions."""
    doc = json.load(open(path))
    out = {}
    if "partitions" in doc:  # ibsa partition show --json
        for p in doc["partitions"]:
            pk = int(p["pkey"], 16)
            if not ours(pk):
                continue
            assert not p["from_file"], p
            out[pk] = (p["ip_over_ib"],
                       {int(m["guid"], 16): m["membership"] for m in p["members"]})
    else:  # UFM's {"0xa01": {"partition", "ip_over_ib", "guids": [{"guid", "membership"}]}}
        for key, p in doc.items():
            pk = int(key, 16)
            if not ours(pk):
                continue
            out[pk] = (p["ip_over_ib"],
                       {int(g["guid"], 16): g["membership"] for g in p["guids"]})
    return out


def wanted_keys(state):
    """{port GUID: {P_Key with the membership bit}}, as the ports should hold them."""
    want = {}
    for pk, (_, members) in state.items():
        for guid, ms in members.items():
            want.setdefault(guid, set()).add(pk | 0x8000 if ms == "full" else pk)
    return want


def read_pkeys(path):
    """{(node, port): (GUID, {the test's keys})} from fabricsim ctl pkeys."""
    ports = {}
    for line in open(path):
        node, num, guid, *keys = line.split()
        ports[(node, int(num))] = (int(guid, 16), {int(k, 16) for k in keys if ours(int(k, 16))})
    return ports


def hosts(state_path, pkeys_path):
    want = wanted_keys(read_state(state_path))
    checked = 0
    for (node, num), (guid, have) in sorted(read_pkeys(pkeys_path).items()):
        if not node.startswith("host-"):
            continue
        exp = want.get(guid, set())
        if have != exp:
            sys.exit(f"{node} port {num}: holds {sorted(map(hex, have))}, {state_path} says "
                     f"{sorted(map(hex, exp))}")
        checked += 1
    print(f"{checked} host ports as {state_path} says "
          f"({sum(len(v) for v in want.values())} memberships)")


def facing(pkeys_path, ports_path):
    keys = read_pkeys(pkeys_path)
    n = 0
    for line in open(ports_path):
        w = line.split()
        host, peer = w[0], w[w.index("peer") + 1].strip('"')
        pnum = int(w[w.index("peer") + 2])
        if keys[(host, 1)][1] != keys[(peer, pnum)][1]:
            sys.exit(f"{host}: {sorted(map(hex, keys[(host, 1)][1]))}, {peer} port {pnum}: "
                     f"{sorted(map(hex, keys[(peer, pnum)][1]))}")
        n += 1
    print(f"{n} switch ports facing hosts hold their hosts' keys")


def same(a_path, b_path):
    a, b = read_state(a_path), read_state(b_path)
    if a != b:
        for pk in sorted(set(a) | set(b)):
            if a.get(pk) != b.get(pk):
                sys.exit(f"P_Key {pk:#06x}: {a_path} says {a.get(pk)}, {b_path} {b.get(pk)}")
    print(f"{a_path} and {b_path} agree on {len(a)} partitions")


def groups(state_path, sa_path):
    # one group for each partition with ip_over_ib, none for one gone or without it
    want = {pk for pk, (ipoib, _) in read_state(state_path).items() if ipoib}
    have = set()
    for line in open(sa_path):
        w = line.split()
        # "group WELL-KNOWN RECORD-HEX CREATOR": the record starts with the MGID
        if w and w[0] == "group" and w[2].startswith("ff12401b"):
            pk = int(w[2][8:12], 16) & 0x7FFF
            if ours(pk):
                have.add(pk)
    if have != want:
        sys.exit(f"groups of {sorted(map(hex, have))}, partitions with IPoIB "
                 f"{sorted(map(hex, want))}")
    print(f"broadcast groups of {sorted(map(hex, have))}, as the partitions ask: ok")


if __name__ == "__main__":
    cmds = {"hosts": hosts, "facing": facing, "same": same, "groups": groups}
    if len(sys.argv) != 4 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2], sys.argv[3])
