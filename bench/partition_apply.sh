#!/usr/bin/env bash
# How soon a partition change is on the ports, and what else is sent (issue 35: "on a
# 2,592-host fabric the P_Key is on the ports within 1 s of the answer and nothing else is
# resent"). ibsmd on a fabricsim fat tree; ROUNDS times `ibsa partition add` of one host to
# a new P_Key over the control socket, then its remove: from the control socket's answer
# until fabricsim's own dump shows the key on the host's port and on the switch port facing
# it (or gone from both), polled back to back; and the SubnSets the SM sent meanwhile
# (fabricsim ctl sets, every attribute) and the LFT blocks written (ctl lft-sets). The
# figures include a fabricsim ctl process per poll (a few ms). Figures only, never a CI
# verdict (test_tenants and ibsmd_partition_control assert what is sent).
# Usage: bench/partition_apply.sh BUILD_DIR [SPEC] [ROUNDS]
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC] [ROUNDS]}" && pwd)
SPEC=${2:-fattree:radix=36,levels=3,hosts=2592}
ROUNDS=${3:-10}
SCENARIO_NAME=bench-partition-apply
. "$(dirname "$0")/../test/scenario/lib.sh" "$BUILD"
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"

start_fabricsim "$SPEC"
IBSMD_UP_TIMEOUT=300
start_named_ibsmd A host-1 10 "sweep_interval: 0"
wait_until 300 grep -q "subnet up" "$WORK/A.log" || fail "ibsmd did not bring the subnet up"
hosts=$("$FS" ctl lids | awk '$4 ~ /^host-/' | wc -l)
lft_total() { "$FS" ctl lft-sets | awk '/^total/ { print $2 }'; }
sets() { "$FS" ctl sets host-1; }
# the host's port and the switch port facing it, both with (want=1) or without (0) key
on_ports() { # HOST PEER PEER-PORT KEY WANT
	local a b
	a=$("$FS" ctl pkeys "$1" | grep -c " $4" || true)
	b=$("$FS" ctl pkeys "$2" | awk -v p="$3" '$2 == p' | grep -c " $4" || true)
	[ "$a" = "$5" ] && [ "$b" = "$5" ]
}
now_ms() { date +%s%3N; }

echo "$SPEC: $hosts hosts, $ROUNDS rounds"
printf '%-6s %-9s %10s %10s %6s %4s\n' op host answer_ms ports_ms sets lft
: >"$WORK/add" && : >"$WORK/remove"
for ((r = 1; r <= ROUNDS; r++)); do
	h="host-$((r * 251 % (hosts - 1) + 2))"
	guid=$("$FS" ctl lids | awk -v h="$h" '$4 == h { print $1 }')
	read -r peer pport < <("$FS" ctl port "$h" 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
	pk=$(printf '0x%04x' $((0x0b00 + r)))
	key=$(printf '0x%04x' $((0x8b00 + r)))
	for op in add remove; do
		want=1
		[ "$op" = remove ] && want=0
		s0=$(sets) l0=$(lft_total)
		t0=$(now_ms)
		opts=()
		[ "$op" = add ] && opts=(--no-ipoib) # the P_Keys alone (an empty group sends nothing)
		"$IBSA" --control "$WORK/control-A" partition "$op" "$pk" "$guid" "${opts[@]}" \
			>/dev/null || fail "$op $pk $guid"
		t1=$(now_ms)
		until on_ports "$h" "$peer" "$pport" "$key" "$want"; do
			[ $(($(now_ms) - t1)) -lt 10000 ] || fail "$op: $key not as asked on $h after 10 s"
		done
		t2=$(now_ms)
		sleep 0.3 # Sets still on their way are counted too
		ds=$(($(sets) - s0)) dl=$(($(lft_total) - l0))
		printf '%-6s %-9s %10d %10d %6d %4d\n' "$op" "$h" $((t1 - t0)) $((t2 - t1)) "$ds" "$dl"
		echo "$((t2 - t1)) $ds $dl" >>"$WORK/$op"
	done
done
for op in add remove; do
	sort -n "$WORK/$op" | awk -v op="$op" '{ ms[NR] = $1; s += $2; l += $3 }
		END { printf "%s: ports %d ms median, %d ms max after the answer; %.1f Sets and %d LFT blocks a change\n",
			op, ms[int((NR + 1) / 2)], ms[NR], s / NR, l }'
done
