#!/usr/bin/env bash
# A port's P_Keys keep their indexes (OpenSM's keep_pkey_indexes, its default): a QP or an
# IPoIB child interface holds its key by index, so a partition leaving a port must not move
# the keys after it. Read from outside with smpquery pkeys: three partitions on host-2, the
# middle one removed (a hole, the last key stays), ibsmd restarted (it knows the indexes
# only from what the port answers), a new partition added (it takes the hole).
# Usage: sm_pkey_indexes.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=4,levels=2"
g2=$("$FS" ctl lids | awk '$4 == "host-2" { print $1 }')
start_named_ibsmd A host-8 10 "sweep_interval: 0"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "ibsmd did not bring the subnet up"
ctl() { "$IBSA" --control "$WORK/control-A" partition "$@"; }

# index_of KEY: where host-2's port holds KEY in its P_Key table, as smpquery reads it
# ("N: k k k ..." rows, N the index of the row's first key); - if nowhere
index_of() {
	on_sim host-6 smpquery pkeys "$(lid_of host-2)" 1 2>/dev/null | python3 -c '
import re, sys
want = int(sys.argv[1], 16)
for line in sys.stdin:
    m = re.match(r"\s*(\d+):\s*((?:0x[0-9a-fA-F]{4}\s*)+)$", line)
    if not m:
        continue
    for i, k in enumerate(m.group(2).split()):
        if int(k, 16) == want:
            print(int(m.group(1)) + i)
            sys.exit(0)
print("-")' "$1"
}
holds() { [ "$(index_of "$1")" != - ]; }

for k in 0a01 0a02 0a03; do
	ctl add "0x$k" "$g2" --membership full >/dev/null || fail "add 0x$k"
	wait_until 10 holds "0x8${k:1}" || fail "host-2 did not get 0x8${k:1}"
done
i1=$(index_of 0x8a01) i2=$(index_of 0x8a02) i3=$(index_of 0x8a03)
[ "$i1" -lt "$i2" ] && [ "$i2" -lt "$i3" ] || fail "indexes $i1 $i2 $i3: not in the order added"
echo "three partitions on host-2 at indexes $i1 $i2 $i3: ok"

ctl remove 0x0a02 "$g2" >/dev/null || fail "remove 0x0a02"
wait_until 10 eval '! holds 0x8a02' || fail "host-2 kept 0x8a02"
[ "$(index_of 0x8a01)" = "$i1" ] || fail "0x8a01 moved from $i1 to $(index_of 0x8a01)"
[ "$(index_of 0x8a03)" = "$i3" ] || fail "0x8a03 moved from $i3 to $(index_of 0x8a03) when 0x8a02 left"
echo "0x8a02 removed: 0x8a01 and 0x8a03 stay at $i1 and $i3: ok"

# a restart: the model starts empty and the partitions come back from the state directory
# in their order, which would put 0x8a03 at $i2; the port's own table says where it is
kill "$PID_A"
wait "$PID_A" 2>/dev/null
ups=$(log_count "subnet up" "$WORK/A.log")
start_named_ibsmd A host-8 10 "sweep_interval: 0"
log_more 60 "subnet up" "$ups" "$WORK/A.log" || fail "the restarted ibsmd did not bring the subnet up"
[ "$(index_of 0x8a03)" = "$i3" ] || fail "after a restart 0x8a03 moved from $i3 to $(index_of 0x8a03)"
[ "$(index_of 0x8a01)" = "$i1" ] || fail "after a restart 0x8a01 moved from $i1 to $(index_of 0x8a01)"
echo "restart: the keys stay at $i1 and $i3: ok"

ctl add 0x0a04 "$g2" --membership full >/dev/null || fail "add 0x0a04"
wait_until 10 holds 0x8a04 || fail "host-2 did not get 0x8a04"
[ "$(index_of 0x8a04)" = "$i2" ] || fail "0x8a04 went to $(index_of 0x8a04), not the hole at $i2"
[ "$(index_of 0x8a03)" = "$i3" ] || fail "0x8a03 moved when 0x8a04 came"
echo "a new partition takes the hole at $i2: ok"
echo "PASS"
