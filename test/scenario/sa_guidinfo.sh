#!/usr/bin/env bash
# Alias GUIDs as a port asks for them (GUIDInfoRecord Set/Delete through `ibsa alias`): the SA
# makes one up or takes the one given, writes it into the port's GUIDInfo table (read back by
# SMP), lists it in GUIDInfoRecords, answers PathRecords to the alias GID, refuses a GUID
# another port uses, keeps aliases across a restart, and removes them on Delete.
# Usage: sa_guidinfo.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
lid1=$("$BUILD/test/fabricsim/fabricsim" ctl lids | awk '$4 == "host-1" { print $2 }')
lid2=$("$BUILD/test/fabricsim/fabricsim" ctl lids | awk '$4 == "host-2" { print $2 }')
as() { local h=$1; shift; SIM_HOST=$h "$IBSA" --transport sim "$@"; }

as host-1 --json alias add "$lid1" 1 >"$WORK/a1.json" || fail "alias add (made up)"
as host-1 --json alias add "$lid1" 2 0x0002c90300001234 >"$WORK/a2.json" || fail "alias add (given)"
made=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["info"]["guid[1]"])' "$WORK/a1.json")
[ "$made" != "0x0000000000000000" ] || fail "the SA made up no GUID: $(cat "$WORK/a1.json")"
smp_block() { # the port's GUIDInfo block 0, read from the port itself
	as host-2 --json smp guidinfo --lid "$lid1" --mod 0
}
has_aliases() {
	smp_block | python3 -c '
import json, sys
g = json.load(sys.stdin)
g = g[0] if isinstance(g, list) else g
g = g.get("data", g.get("info", g))
sys.exit(0 if g["guid[1]"] == sys.argv[1] and g["guid[2]"] == "0x0002c90300001234" else 1)' "$made"
}
wait_until 5 has_aliases || fail "the port's GUIDInfo table lacks the aliases: $(smp_block)"
echo "aliases made up and given, written into the port: ok"

as host-2 --json guids "$lid1" >"$WORK/g.json" || fail "ibsa guids"
grep -q 0x0002c90300001234 "$WORK/g.json" || fail "GUIDInfoRecord lacks the alias: $(cat "$WORK/g.json")"
as host-2 --json paths "host-2 HCA-1" fe80::2:c903:0:1234 >"$WORK/p.json" || fail "no path to the alias GID"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); sys.exit(0 if p and p[0]["dlid"] == int(sys.argv[2]) else 1)' \
	"$WORK/p.json" "$lid1" || fail "path to the alias GID does not lead to host-1: $(cat "$WORK/p.json")"
echo "GUIDInfoRecord lists it, PathRecords to the alias GID reach the port: ok"

# another port asking for the same GUID does not get it
as host-2 --json alias add "$lid2" 1 0x0002c90300001234 >"$WORK/dup.json" || fail "alias add on host-2"
grep -q 0x0002c90300001234 "$WORK/dup.json" && fail "a GUID in use was given to a second port"
# a port may not set another port's aliases without the SM_Key
out=$(as host-2 alias add "$lid1" 3 2>&1) && fail "host-2 set host-1's alias: $out"
echo "GUIDs in use refused, other ports' aliases need the SM_Key: ok"

sa_state_written
grep -q "^alias .*0x0002c90300001234" "$WORK/state/sa-state" ||
	fail "the state file lacks the alias: $(grep ^alias "$WORK/state/sa-state")"
stop_pids "$IBSMD_PID"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
as host-2 --json guids "$lid1" >"$WORK/g2.json" || fail "ibsa guids after restart"
grep -q 0x0002c90300001234 "$WORK/g2.json" || fail "the alias did not survive a restart"
as host-1 alias delete "$lid1" 2 >/dev/null || fail "alias delete"
as host-2 --json guids "$lid1" >"$WORK/g3.json" || fail "ibsa guids"
grep -q 0x0002c90300001234 "$WORK/g3.json" && fail "the alias survived its Delete"
no_alias2() { ! smp_block | has 0x0002c90300001234; }
wait_until 5 no_alias2 || fail "the port still holds the deleted alias"
echo "kept across a restart, gone after Delete, from the port too: ok"
