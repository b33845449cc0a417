#!/usr/bin/env bash
# Multicast as a busy fabric sees it: 100 hosts join and leave 20 groups 1,000 times, many
# requests in flight at once (test/tools/mcast_churn). Afterwards the SA's groups hold exactly
# the members the clients think they have, every group has its own MLID, the MFTs the SM
# programmed carry every group to each member exactly once without loops (fabricsim verify)
# and to no port the SA does not list as its member (fabricsim ctl mcast),
# and no MLID is programmed for a group that no longer exists. Then everybody leaves: only
# the IPoIB broadcast group stays, and no MFT entry is left anywhere.
# Usage: sa_multicast.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
CHURN="$BUILD/test/mcast_churn"
start_fabricsim "fattree:radix=16,levels=2" # 128 hosts, 24 switches
SIM_HOST=host-128 start_ibsmd --sweep-interval 0 -v

sa_groups() { # FILE: the SA's MCMemberRecords, one per member (trusted: SM_Key 1)
	SIM_HOST=host-127 "$IBSA" --transport sim --sm-key 1 --json mcast >"$1" ||
		fail "ibsa mcast"
}
mft_settled() { # N: fabricsim verify sees N MLIDs in the MFTs, none bad
	"$BUILD/test/fabricsim/fabricsim" verify --json >"$WORK/verify.json" || true
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["multicast"]
sys.exit(0 if m["mlids"] == int(sys.argv[2]) and m["bad"] == 0 else 1)' "$WORK/verify.json" "$1"
}

"$CHURN" --hosts 100 --groups 20 --ops 1000 --seed 7 >"$WORK/members.txt" 2>"$WORK/churn.log" ||
	fail "mcast_churn: $(cat "$WORK/churn.log")"
cat "$WORK/churn.log"
sa_groups "$WORK/sa.json"
ngroups=$(python3 - "$WORK/members.txt" "$WORK/sa.json" <<'PY'
import ipaddress, json, sys
want = {tuple(l.split()) for l in open(sys.argv[1]) if l.strip()}
recs = json.load(open(sys.argv[2]))
have = set()
mlid_of = {}
for r in recs:
    guid = int(ipaddress.IPv6Address(r["port_gid"])) & ((1 << 64) - 1)
    have.add((r["mgid"], "0x%016x" % guid))
    assert r["join_state"] == 1, f"JoinState {r}"
    mlid_of.setdefault(r["mgid"], r["mlid"])
    assert mlid_of[r["mgid"]] == r["mlid"], f"one group, two MLIDs: {r}"
assert want == have, f"members only the clients know {sorted(want - have)[:3]}, only the SA {sorted(have - want)[:3]}"
mlids = list(mlid_of.values())
assert len(set(mlids)) == len(mlids), f"groups share MLIDs {sorted(mlids)}"
assert all(0xc000 <= m < 0xc000 + 1024 for m in mlids), f"MLIDs out of range {mlids}"
print(len(mlid_of))
PY
) || fail "the SA's groups differ from the clients' memberships"
echo "SA: $(wc -l <"$WORK/members.txt") memberships in $ngroups groups, as the clients hold them, one MLID each: ok"
wait_until 10 mft_settled "$ngroups" ||
	fail "MFTs: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["multicast"], r["issues"][:4])' "$WORK/verify.json") (want $ngroups MLIDs)"
echo "MFTs: $ngroups MLIDs, each reaching its members once, loop-free: ok"
wait_until 10 mfts_follow_sa host-127 ||
	fail "MFTs and the SA's members differ: $(head -3 "$WORK/mfts-vs-sa")"
echo "MFTs: each MLID delivers to the SA's members of its group, no other port: ok"

# a PathRecord to a group: its MLID, with the group's MTU and rate
mgid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["mgid"])' "$WORK/sa.json")
SIM_HOST=host-5 "$IBSA" --transport sim --json paths "host-5 HCA-1" "$mgid" >"$WORK/mpath.json" ||
	fail "ibsa paths to $mgid: $(cat "$WORK/mpath.json")"
python3 - "$WORK/sa.json" "$WORK/mpath.json" "$mgid" <<'PY' || fail "PathRecord to a group"
import json, sys
g = next(r for r in json.load(open(sys.argv[1])) if r["mgid"] == sys.argv[3])
p = json.load(open(sys.argv[2]))
assert len(p) == 1 and p[0]["dlid"] == g["mlid"] and p[0]["dgid"] == g["mgid"], f"path {p}, group {g}"
assert p[0]["mtu"] == g["mtu"] and p[0]["rate"] == g["rate"], f"path {p}, group {g}"
PY
echo "PathRecord to a group: its MLID, MTU and rate: ok"

# everybody leaves: the groups go, their MLIDs with them
"$CHURN" --hosts 100 --groups 20 --ops 0 --members "$WORK/members.txt" --leave-all >"$WORK/left.txt" 2>"$WORK/churn2.log" ||
	fail "mcast_churn --leave-all: $(cat "$WORK/churn2.log")"
SIM_HOST=host-127 "$IBSA" --transport sim --json mcast >"$WORK/after.json" || fail "ibsa mcast"
python3 - "$WORK/after.json" <<'PY' || fail "groups left behind"
import json, sys
recs = json.load(open(sys.argv[1]))
assert [r["mgid"] for r in recs] == ["ff12:401b:ffff::ffff:ffff"], f"groups after everybody left: {recs}"
PY
wait_until 10 mft_settled 0 || fail "MFT entries left behind: $(cat "$WORK/verify.json" | head -c 400)"
echo "all left: only the IPoIB broadcast group remains, no MFT entry anywhere: ok"
grep -q "multicast group ff15:1234::" "$WORK/ibsmd.log" || fail "group creation and deletion not logged"
