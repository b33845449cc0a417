#!/usr/bin/env bash
# ibsmd as a daemon keeps the subnet up: a pulled link or a whole switch is routed around
# within two sweeps, only the switches whose routes it broke are reprogrammed (fabricsim
# counts every LFT block Set), a node that appears is discovered and routed without
# disturbing anyone's LID, and a node coming back gets its LID again. A switch that goes is
# handled the same whether a trap or the SM's own poll finds it (traps can be lost).
# Usage: ibsmd_keepup.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
SWEEP=1
start_fabricsim "fattree:radix=12,levels=2" # 6 spines, 12 leaves, 72 hosts
# the SM sits on a host, so switches can go away under it
SIM_HOST=host-72 start_ibsmd --sweep-interval $SWEEP
wait_until 10 verify_passes || fail "not up: $("$FS" verify | tail -3)"
# where the kernel gives huge pages on request and glibc has the tunable, the daemon runs
# with glibc.malloc.hugetlb=1 (daemon/hugepages.c starts it again so): a large fabric's
# tables are faulted in 2 MB at a time
if grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null &&
	getconf GNU_LIBC_VERSION | awk '{ split($2, v, "."); exit !(v[1] > 2 || v[2] >= 35) }'; then
	tr '\0' '\n' <"/proc/$IBSMD_PID/environ" | grep -q '^GLIBC_TUNABLES=.*glibc.malloc.hugetlb=1' ||
		fail "ibsmd runs without glibc.malloc.hugetlb=1: $(tr '\0' '\n' <"/proc/$IBSMD_PID/environ" | grep TUNABLES)"
	# and under its own name (ps, pgrep, killall)
	[ "$(cat "/proc/$IBSMD_PID/comm")" = ibsmd ] || fail "ibsmd runs as \"$(cat "/proc/$IBSMD_PID/comm")\""
fi
"$FS" ctl lids | sort >"$WORK/lids.0"

changed() { join "$1" "$2" | awk '$2 != $3 { print $1 }' | sort; }
# the SM's sweeps ended (-1 while one is under way)
count() { "$BUILD/cli/ibsa" --control "$WORK/control" --json status |
	python3 -c 'import json,sys; s=json.load(sys.stdin)["sweeps"]; print(-1 if s["sweeping"] else s["count"])'; }
idle() { [ "$(count)" -ge 0 ]; }
# rerouted_within SECONDS [WORKING_BEFORE]: verify passes (waited for, the deadline scaled),
# and "within two sweeps" is judged on the daemon's own log: the tables are written by
# sweeps alone, and a sweep that sent anything ends with "subnet up"; when the routes are
# whole, at most two such sweeps have ended since the change (sweeps that found nothing to
# do, a light sweep's poll catching up, say, do not count)
working() { log_count 'subnet up:'; }
rerouted_within() {
	wait_until "$1" verify_passes || fail "not rerouted within $1 s: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
	[ -n "${2:-}" ] || return 0
	wait_until 10 idle || fail "a sweep never ends"
	local n=$(($(working) - $2))
	[ "$n" -le 2 ] || fail "rerouted after $n sweeps that sent SMPs, not within two: $(grep 'subnet up:' "$WORK/ibsmd.log" | tail -$n | cut -c1-160)"
}
# the working sweeps ended before a change, none under way
sweeps_before() { wait_until 10 idle || fail "a sweep never ends"; working; }

# 1. a leaf-to-spine cable: spines other than spine-1 keep their tables (and leaf-1's
# ports are re-read by a route that avoids the broken link)
lft_sets >"$WORK/a"
n0=$(sweeps_before)
"$FS" ctl link down leaf-1 7 >/dev/null
rerouted_within $((2 * SWEEP + 1)) "$n0"
lft_sets >"$WORK/b"
changed "$WORK/a" "$WORK/b" >"$WORK/changed"
echo "link leaf-1/7 down: reprogrammed $(tr '\n' ' ' <"$WORK/changed")"
grep -q '^spine-[2-6]$' "$WORK/changed" && fail "spines that lost nothing were reprogrammed"
grep -q '^leaf-1$' "$WORK/changed" || fail "leaf-1 was not rerouted"
grep -q "no PortInfo" "$WORK/ibsmd.log" && fail "a switch's ports went unread: $(grep "no PortInfo" "$WORK/ibsmd.log" | head -2)"

# 2. a whole spine: the other spines' routes stay. Found by the leaves' traps, or by the
# light sweep's poll if that comes first: the same either way. The traps come one by one:
# the first (leaf-1's) can be handled alone, as a link down with spine-4 still there, and
# the other spines' way to spine-4's own LID (over leaf-1) then changes, rightly; their
# tables may change there, and nowhere else.
spine_lfts() { for s in spine-1 spine-2 spine-3 spine-5 spine-6; do
	"$FS" ctl lft "$s" | awk -v s="$s" -v g="$1" '!/^#/ && $1 != g { print s, $0 }'; done; }
gone=$(awk '$4 == "spine-4" { print $2 }' "$WORK/lids.0")
[ -n "$gone" ] || fail "no LID of spine-4 in $(head -3 "$WORK/lids.0")"
lft_sets >"$WORK/a"
spine_lfts "$gone" >"$WORK/spines.a"
n0=$(sweeps_before)
"$FS" ctl node remove spine-4 >/dev/null
rerouted_within $((2 * SWEEP + 1)) "$n0"
lft_sets >"$WORK/b"
changed "$WORK/a" "$WORK/b" >"$WORK/changed"
echo "spine-4 removed: reprogrammed $(tr '\n' ' ' <"$WORK/changed")"
spine_lfts "$gone" >"$WORK/spines.b"
cmp -s "$WORK/spines.a" "$WORK/spines.b" ||
	fail "other spines' routes changed beyond the way to spine-4 (LID $gone): $(diff "$WORK/spines.a" "$WORK/spines.b" | head -6 | tr '\n' ' ')"

# 2b. another spine with every trap lost: only the light sweep's poll can find it, and it
# is handled as the traps would have had it (this path used to rediscover the fabric and
# rewrite every spine's table)
"$FS" ctl traps off >/dev/null
lft_sets >"$WORK/a"
n0=$(sweeps_before)
"$FS" ctl node remove spine-5 >/dev/null
rerouted_within $((2 * SWEEP + 1)) "$n0"
grep -q '"spine-5" .* does not answer' "$WORK/ibsmd.log" ||
	fail "spine-5's loss was not found by the poll: $(grep spine-5 "$WORK/ibsmd.log" | tail -2)"
lft_sets >"$WORK/b"
changed "$WORK/a" "$WORK/b" >"$WORK/changed"
echo "spine-5 removed, traps lost: reprogrammed $(tr '\n' ' ' <"$WORK/changed")"
grep -q '^spine' "$WORK/changed" && fail "other spines were reprogrammed when a poll found the loss"
"$FS" ctl traps on >/dev/null

# the links the SM knows
swept_after() { [ "$(count)" -gt "$1" ]; }
links() { "$BUILD/cli/ibsa" --control "$WORK/control" --json status |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["subnet"]["links"])'; }
# links let in are routed over in a pass of their own ("ACTIVE and settled"): a
# sweep has ended after the last such pass, nothing under way, and the SM knows N links
links_are() {
	[ "$(links)" = "$1" ] && [ "$(count)" -ge 0 ] &&
		awk '/ACTIVE and settled/ { s = NR } /subnet up/ { u = NR } END { exit !(u > s) }' "$WORK/ibsmd.log"
}

# 2c. a hung spine: links up, nothing answers (every MAD into it lost). Its neighbours are
# read, find their links up, and the next sweep is a full one, which takes the links to it
# for half-dead and routes around them.
l0=$(links)
for p in $(seq 1 12); do "$FS" ctl drop 100 spine-6 "$p" >/dev/null; done
wait_until $((4 * SWEEP + 5)) grep -q 'nothing answers behind it' "$WORK/ibsmd.log" ||
	fail "a hung spine-6 was not found: $(grep -E 'spine-6|half-dead' "$WORK/ibsmd.log" | tail -3)"
echo "spine-6 hung: found silent, then its links taken for half-dead"
for p in $(seq 1 12); do "$FS" ctl drop 0 spine-6 "$p" >/dev/null; done
# its links are probed again at the next sweeps, and routed over once found
wait_until $((4 * SWEEP + 5)) links_are "$l0" || fail "spine-6's links not found again: $(links) of $l0"
rerouted_within $((2 * SWEEP + 1))

# 3. a host's cable: nothing to reroute, nothing rewritten. The SM has seen it when it logs
# the link down and a sweep after that has ended (the status's count, nothing under way).
lft_sets >"$WORK/a"
n0=$(count)
"$FS" ctl link down leaf-5 2 >/dev/null
wait_until 10 grep -q 'link down at "leaf-5".* port 2 ' "$WORK/ibsmd.log" ||
	fail "the host's link down was not seen"
wait_until 10 swept_after "$n0" ||
	fail "no sweep ended after the host's link went down"
verify_passes || fail "verify after a host left"
lft_sets >"$WORK/b"
[ -z "$(changed "$WORK/a" "$WORK/b")" ] || fail "a host leaving rewrote tables: $(changed "$WORK/a" "$WORK/b" | tr '\n' ' ')"
echo "host link down: no table rewritten"

# 4. everything comes back: same LIDs as before, subnet whole
"$FS" ctl link up leaf-5 2 >/dev/null
"$FS" ctl node add spine-4 >/dev/null
"$FS" ctl node add spine-5 >/dev/null
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
