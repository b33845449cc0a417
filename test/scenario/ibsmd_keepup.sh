#!/usr/bin/env bash
# ibsmd as a daemon keeps the subnet up: a pulled link or a whole switch is routed around
# within two sweeps, only the switches whose routes it broke are reprogrammed (fabricsim
# counts every LFT block Set), a node that appears is discovered and routed without
# disturbing anyone's LID, and a node coming back gets its LID again.
# Usage: ibsmd_keepup.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
SWEEP=1
start_fabricsim "fattree:radix=12,levels=2" # 6 spines, 12 leaves, 72 hosts
# the SM sits on a host, so switches can go away under it
SIM_HOST=host-72 start_ibsmd --sweep-interval $SWEEP
wait_until 10 verify_passes || fail "not up: $("$FS" verify | tail -3)"
"$FS" ctl lids | sort >"$WORK/lids.0"

changed() { join "$1" "$2" | awk '$2 != $3 { print $1 }' | sort; }
rerouted_within() { # SECONDS: verify passes within that time
	wait_until "$1" verify_passes || fail "not rerouted within $1 s: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
}

# 1. a leaf-to-spine cable: spines other than spine-1 keep their tables (and leaf-1's
# ports are re-read by a route that avoids the broken link)
lft_sets >"$WORK/a"
"$FS" ctl link down leaf-1 7 >/dev/null
rerouted_within $((2 * SWEEP + 1))
lft_sets >"$WORK/b"
changed "$WORK/a" "$WORK/b" >"$WORK/changed"
echo "link leaf-1/7 down: reprogrammed $(tr '\n' ' ' <"$WORK/changed")"
grep -q '^spine-[2-6]$' "$WORK/changed" && fail "spines that lost nothing were reprogrammed"
grep -q '^leaf-1$' "$WORK/changed" || fail "leaf-1 was not rerouted"
grep -q "no PortInfo" "$WORK/ibsmd.log" && fail "a switch's ports went unread: $(grep "no PortInfo" "$WORK/ibsmd.log" | head -2)"

# 2. a whole spine: only leaves change, no other spine
lft_sets >"$WORK/a"
"$FS" ctl node remove spine-4 >/dev/null
rerouted_within $((2 * SWEEP + 1))
lft_sets >"$WORK/b"
changed "$WORK/a" "$WORK/b" >"$WORK/changed"
echo "spine-4 removed: reprogrammed $(tr '\n' ' ' <"$WORK/changed")"
grep -q '^spine' "$WORK/changed" && fail "other spines were reprogrammed"

# 3. a host's cable: nothing to reroute, nothing rewritten
lft_sets >"$WORK/a"
"$FS" ctl link down leaf-5 2 >/dev/null
sleep $((2 * SWEEP + 1))
verify_passes || fail "verify after a host left"
lft_sets >"$WORK/b"
[ -z "$(changed "$WORK/a" "$WORK/b")" ] || fail "a host leaving rewrote tables: $(changed "$WORK/a" "$WORK/b" | tr '\n' ' ')"
echo "host link down: no table rewritten"

# 4. everything comes back: same LIDs as before, subnet whole
"$FS" ctl link up leaf-5 2 >/dev/null
"$FS" ctl node add spine-4 >/dev/null
"$FS" ctl link up leaf-1 7 >/dev/null
wait_until $((4 * SWEEP + 5)) sh -c "'$FS' verify --json | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r[\"ok\"] and r[\"ports\"][\"linked\"] == 288 else 1)'" ||
	fail "not whole again: $("$FS" verify | tail -4)"
"$FS" ctl lids | sort >"$WORK/lids.1"
diff -u "$WORK/lids.0" "$WORK/lids.1" || fail "LIDs changed"
echo "all back, every LID as before"

# 5. the SM answers SMInfo, reached by its LID through the tables it programmed
sm_lid=$("$FS" ctl port host-72 1 | sed -n 's/.* lid \([0-9]*\) .*/\1/p')
out=$("$BUILD/cli/ibsa" --transport sim --sim-node host-1 smp sminfo --lid "$sm_lid" 2>&1) ||
	fail "SMInfo from the SM at LID $sm_lid: $out"
echo "$out" | grep -Eq '^state +3$' || fail "SM not MASTER: $out"
echo "ibsmd keeps the subnet up: ok"
