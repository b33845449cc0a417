#!/usr/bin/env bash
# M_Key protection protects: with ibsmd managing the fabric under an M_Key (protection
# level 1: anyone may read, only the key holder may change), a rogue program on a host
# (infiniband-diags' ibportstate, guessing keys) cannot disable a switch's port or another
# host's port: fabricsim's SMAs refuse the Sets as IBA says, each refused SMP raises trap
# 256 (Bad M_Key) to the SM, and ibsmd logs an mkey_violation event naming the port, the
# rogue's LID and what it tried. The fabric stays whole, no table changed.
# Usage: sm_mkey_rogue.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need ibportstate
FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2"
printf 'm_key: 0x5eed5eed\nm_key_protect: 1\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"
leaf_lid=$(lid_of leaf-2)
h6_lid=$(lid_of host-6)
rogue_lid=$(lid_of host-5)
lft_sets >"$WORK/a"

# the rogue guesses keys: 0 (none), 1, and the SM's key with one bit wrong
for key in 0 1 0x5eed5eec; do
	on_sim host-5 ibportstate -t 200 -y "$key" "$leaf_lid" 3 disable >/dev/null 2>&1 || true
	on_sim host-5 ibportstate -t 200 -y "$key" "$h6_lid" 1 disable >/dev/null 2>&1 || true
done
"$FS" ctl port leaf-2 3 | has "state ACTIVE phys 5" || fail "leaf-2 port 3 changed: $("$FS" ctl port leaf-2 3)"
"$FS" ctl port host-6 1 | has "state ACTIVE phys 5" || fail "host-6 changed: $("$FS" ctl port host-6 1)"
echo "a rogue on host-5 could not disable a switch port nor another host's port"

# reading is allowed at level 1, without the key shown
out=$(on_sim host-5 smpquery -t 500 portinfo "$h6_lid" 1) || fail "a read was refused at protection level 1"
grep -q "^Mkey:\.*0x0*5eed5eed" <<<"$out" && fail "the M_Key was shown: $(grep Mkey <<<"$out")"
echo "reads still answered, the M_Key hidden"

# nor does the SA give the keys away: PortInfoRecords to a requester without the SM_Key
# carry M_Key 0 (they carried every port's key); a trusted requester still gets them
IBSA="$BUILD/cli/ibsa"
mkeys_seen() { # [ibsa options]: the distinct M_Keys in every PortInfoRecord
	SIM_HOST=host-5 "$IBSA" --transport sim "$@" --json ports |
		python3 -c 'import json, sys; r = json.load(sys.stdin); assert r, "no records"; print(" ".join(sorted({str(x["info"]["mkey"] if "info" in x else x["mkey"]) for x in r})))'
}
seen=$(mkeys_seen) || fail "ibsa ports"
case "$seen" in
0 | 0x0000000000000000) ;;
*) fail "PortInfoRecords to an untrusted host carry M_Keys: $seen" ;;
esac
seen=$(mkeys_seen --sm-key 1) || fail "ibsa --sm-key 1 ports"
case "$seen" in *5eed5eed*) ;; *) fail "a trusted requester no longer gets the M_Keys: $seen" ;; esac
echo "PortInfoRecords: M_Key 0 to an untrusted host, the keys to a trusted requester"

# the SM heard of it: trap 256 from both ports, naming the rogue and PortInfo Set
wait_until 10 sh -c "grep -c 'event=mkey_violation' '$WORK/ibsmd.log' | grep -qv '^0$'" ||
	fail "no mkey_violation event: $(grep -i 'trap 256\|m_key' "$WORK/ibsmd.log" | tail -3)"
grep "event=mkey_violation" "$WORK/ibsmd.log" | has "requester_lid=$rogue_lid attribute=0x0015 method=0x02" ||
	fail "the event does not name LID $rogue_lid's PortInfo Set: $(grep event=mkey_violation "$WORK/ibsmd.log" | head -2)"
grep "event=mkey_violation" "$WORK/ibsmd.log" | has "leaf-2" || fail "no violation reported at leaf-2"
grep "event=mkey_violation" "$WORK/ibsmd.log" | has "host-6" || fail "no violation reported at host-6"
echo "trap 256 reached the SM: $(grep -c 'event=mkey_violation' "$WORK/ibsmd.log") mkey_violation events naming LID $rogue_lid"

lft_sets >"$WORK/b"
diff -q "$WORK/a" "$WORK/b" >/dev/null || fail "tables were rewritten: $(diff "$WORK/a" "$WORK/b" | head -3)"
check_verify 'r["ok"]' >/dev/null || fail "fabricsim verify: $("$FS" verify | tail -3)"
echo "the fabric whole, no table changed"
echo "M_Key protection against a rogue host: ok"
