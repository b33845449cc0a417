#!/usr/bin/env bash
# Partitions changed at run time through the control socket (issue 35): `ibsa partition add`
# puts P_Key 0x0a0b on host-2's and host-3's ports (smpquery pkeys) with only their P_Key
# tables sent (the SM's Sets grow by the tables of those ports and the switch ports facing
# them; no LFT block is written); remove takes host-3 out; ibsmd.yaml's own member cannot be
# removed; bad input is refused with a clear message; a SIGHUP keeps the change, and so do a
# restart and a takeover by the standby it was synced to.
# Usage: ibsmd_partition_control.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=4,levels=2"
guid_of() { "$FS" ctl lids | awk -v h="$1" '$4 == h { print $1 }'; }
g1=$(guid_of host-1) g2=$(guid_of host-2) g3=$(guid_of host-3)
YAML=("sweep_interval: 0" "partitions:" "  - name: storage" "    pkey: 0x0010"
	"    members: [$g1]")
start_named_ibsmd A host-8 10 "${YAML[@]}"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-7 5 "${YAML[@]}"
ctl() { local who=$1; shift; "$IBSA" --control "$WORK/control-$who" partition "$@"; }
# host's P_Key table, block 0, as smpquery reads it from the port
pkeys_of() { on_sim host-6 smpquery pkeys "$(lid_of "$1")" 1 2>/dev/null; }
has_key() { pkeys_of "$1" | grep -qi "$2"; }

# bad input: refused, with the value at fault named, nothing changed
expect_refused() { # WORDS-IN-MESSAGE ARGS...
	local want=$1 out
	shift
	out=$(ctl A "$@" 2>&1) && fail "partition $* was taken: $out"
	grep -q -- "$want" <<<"$out" || fail "partition $*: \"$out\" does not say \"$want\""
}
expect_refused "0 and all ones are reserved" add 0x0a0b 0xffffffffffffffff
expect_refused "not a partition's" add 0x0000 "$g2"
expect_refused "default partition" add 0x7fff "$g2"
expect_refused "not a P_Key" add 0x1zz "$g2"
expect_refused "full or limited" add 0x0a0b "$g2" --membership both
expect_refused "is not a GUID" add 0x0a0b "$g2,nonsense"
expect_refused "in ibsmd.yaml" remove 0x0010 "$g1"
echo "bad P_Keys, GUIDs and memberships and the file's own member refused: ok"
# a GUID the fabric does not show yet is kept pending, shown so, and removed like any member
ctl A add 0x0a0c 0x0002c9fffe00d001 >"$WORK/pending.out" || fail "pending add: $(cat "$WORK/pending.out")"
grep -q "1 pending until the fabric shows them" "$WORK/pending.out" || fail "pending add: $(cat "$WORK/pending.out")"
ctl A show 0x0a0c | grep -q "0x0002c9fffe00d001 full api pending (not in the fabric yet)" ||
	fail "show: $(ctl A show 0x0a0c)"
ctl A remove 0x0a0c 0x0002c9fffe00d001 >/dev/null || fail "removing the pending GUID"
ctl A show 0x0a0c >/dev/null 2>&1 && fail "partition 0x0a0c outlived its only (pending) member"
echo "a GUID not in the fabric: kept pending, shown so, removed: ok"
# a partition defined without members, with its caps, kept until deleted
ctl A define 0x0a0d --name tenant-d --mtu-limit 2048 --rate-limit 25 --sl 2 >/dev/null ||
	fail "define: $(ctl A define 0x0a0d --name tenant-d 2>&1)"
ctl A show 0x0a0d | grep -q "^0x0a0d tenant-d (API) index0 no ipoib yes mtu_limit 2048 rate_limit 25 sl 2$" ||
	fail "show of a defined partition: $(ctl A show 0x0a0d)"
expect_refused "in ibsmd.yaml" define 0x0010 --sl 1
expect_refused "define takes" define 0x0a0d --mtu-limit 3000
ctl A delete 0x0a0d >/dev/null || fail "delete"
ctl A show 0x0a0d >/dev/null 2>&1 && fail "partition 0x0a0d outlived its delete"
echo "partition define (no members, MTU and rate caps, SL), show, delete: ok"
# a client other than ibsa that sends a word the socket does not know is told every command
help=$(python3 - "$WORK/control-A" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"bogus\n")
print(b"".join(iter(lambda: s.recv(4096), b"")).decode())
PY
)
grep -q 'unknown command "bogus".*topology slurm|slurm-yaml \[NAME\]|dot.*partition add|remove|show' <<<"$help" ||
	fail "the unknown command's help: $help"

lft0=$(lft_sets)
sets0=$("$FS" ctl sets host-8)
ctl A add 0x0a0b "$g2,$g3" --membership full >"$WORK/add.out" || fail "add: $(cat "$WORK/add.out")"
wait_until 5 has_key host-2 0x8a0b || fail "host-2 lacks 0x8a0b: $(pkeys_of host-2)"
wait_until 5 has_key host-3 0x8a0b || fail "host-3 lacks 0x8a0b: $(pkeys_of host-3)"
has_key host-1 0x8a0b && fail "host-1 got 0x8a0b"
sets=$(($("$FS" ctl sets host-8) - sets0))
# host-2's and host-3's tables and those of their leaves' ports facing them
[ "$sets" -le 4 ] || fail "$sets Sets for a change of two ports' P_Keys"
[ "$(lft_sets)" = "$lft0" ] || fail "LFT blocks were written for a P_Key change"
# the journal says who asked: the uid the kernel gives for the socket's peer, and its name
who="control socket uid $(id -u) ($(id -un))"
grep -qF "event=partition_changed who=$who action=add pkey=0x0a0b" "$WORK/A.log" ||
	fail "no partition_changed event by \"$who\" in the log: $(grep partition_changed "$WORK/A.log")"
echo "add: 0x8a0b on host-2 and host-3 with $sets Sets, no LFT block, journalled as by $who: ok"

ctl A show 0x0a0b --json >"$WORK/show.json" || fail "show"
python3 - "$WORK/show.json" "$g2" "$g3" <<'PY' || fail "show: $(cat "$WORK/show.json")"
import json, sys
p = json.load(open(sys.argv[1]))
guids = sorted(int(m["guid"], 16) for m in p["members"] if m["from_api"])
assert guids == sorted(int(g, 16) for g in sys.argv[2:]), guids
assert p["pkey"] == "0x0a0b" and not p["from_file"]
PY

ctl A remove 0x0a0b "$g3" >/dev/null || fail "remove"
wait_until 5 eval '! has_key host-3 0x8a0b' || fail "host-3 kept 0x8a0b: $(pkeys_of host-3)"
has_key host-2 0x8a0b || fail "host-2 lost 0x8a0b with host-3's removal"
echo "remove: host-3 out, host-2 stays: ok"

# the standby holds the change, written in its state directory
b_has() { grep -q "^pmember 0x0a0b $g2" "$WORK/state-B/partitions-api" 2>/dev/null; }
wait_until 20 b_has || fail "the standby B did not get the change"

# a SIGHUP rereads ibsmd.yaml: the API's member stays
reloads=$(log_count "reload of" "$WORK/A.log")
ups=$(log_count "subnet up" "$WORK/A.log")
kill -HUP "$PID_A"
log_more 10 "reload of" "$reloads" "$WORK/A.log" || fail "A did not log the reload"
# what a reload applies, it applies by a full sweep: judged after it
if grep "reload of" "$WORK/A.log" | tail -n 1 | grep -q "full sweep"; then
	log_more 30 "subnet up" "$ups" "$WORK/A.log" || fail "A's sweep after the reload did not end"
fi
ctl A show 0x0a0b >/dev/null || fail "the API's partition went with the SIGHUP"
has_key host-2 0x8a0b || fail "host-2 lost 0x8a0b with the SIGHUP"
echo "SIGHUP: kept: ok"

# a takeover by B: the P_Key stays on the port and B answers for the partition
kill -9 "$PID_A"
b_took_over() { grep -A1000 "taking over" "$WORK/B.log" | grep -q "subnet up"; }
wait_until 30 b_took_over || fail "B did not take over"
wait_until 30 ctl B show 0x0a0b >/dev/null || fail "B does not know partition 0x0a0b"
has_key host-2 0x8a0b || fail "host-2 lost 0x8a0b in the takeover"
ctl B add 0x0a0b "$g3" >/dev/null || fail "B did not take a change as master"
wait_until 5 has_key host-3 0x8a0b || fail "B's add did not reach host-3"
echo "takeover: B holds the partition and changes it: ok"

# a restart of B: the change comes back from its state directory
kill "$PID_B"
wait "$PID_B" 2>/dev/null || true
start_named_ibsmd B host-7 5 "${YAML[@]}"
b_back() { [ "$(grep -c "subnet up" "$WORK/B.log")" -ge 2 ]; }
wait_until 60 b_back || fail "B did not come back"
wait_until 30 ctl B show 0x0a0b >/dev/null || fail "B forgot the partition in a restart"
ctl B show 0x0a0b | grep -q "$g3" || fail "B forgot host-3's membership in a restart"
has_key host-3 0x8a0b || fail "host-3 lost 0x8a0b in B's restart"
echo "restart: kept: ok"
echo PASS
