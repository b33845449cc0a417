#!/usr/bin/env bash
# Partitions changed at run time under load (issue 35): 10 clients call `ibsa partition
# add|remove` over the control socket at once, on 4 P_Keys and 30 hosts, while the SA is
# asked for nodes and paths all along. Then every port's P_Key table (fabricsim's own dump:
# each host port and the switch port facing it) holds exactly what `partition show --json`
# says of the test's keys, the SA's IPoIB broadcast groups are those of the API partitions
# that ask for one (a partition gone takes its group), no LFT block was written, and every
# SA query was answered.
# PARTITION_LOAD_CALLS: the calls in all (default 300 for CI; the issue's figure is 1000).
# Usage: ibsmd_partition_load.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

CALLS=${PARTITION_LOAD_CALLS:-300}
CLIENTS_N=10
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=8,levels=2" # 32 hosts, 12 switches
start_named_ibsmd A host-1 10 "sweep_interval: 0"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
"$FS" ctl lids | awk '$4 ~ /^host-/ && $4 != "host-1" && $4 != "host-32" { print $1 }' \
	>"$WORK/guids"
[ "$(wc -l <"$WORK/guids")" = 30 ] || fail "not 30 hosts: $(cat "$WORK/guids")"
lft0=$(lft_sets)

# one client: CALLS/10 adds and removes of 1-3 random hosts on one of 4 P_Keys; a call may
# find the partition gone by another's remove ("no partition"), nothing else may go wrong
client() {
	local id=$1 n=$2 i out pk guids ms
	mapfile -t G <"$WORK/guids"
	RANDOM=$((id * 7919))
	for ((i = 0; i < n; i++)); do
		pk=$(printf '0x0a0%d' $((RANDOM % 4 + 1)))
		guids=${G[RANDOM % 30]}
		((RANDOM % 2)) && guids+=,${G[RANDOM % 30]}
		((RANDOM % 3)) || guids+=,${G[RANDOM % 30]}
		ms=full
		((RANDOM % 4)) || ms=limited
		if ((RANDOM % 5 < 3)); then
			out=$("$IBSA" --control "$WORK/control-A" partition add "$pk" "$guids" \
				--membership "$ms" $( ((RANDOM % 3)) || echo --no-ipoib) 2>&1) ||
				echo "client $id add $pk $guids: $out" >>"$WORK/errors"
		else
			out=$("$IBSA" --control "$WORK/control-A" partition remove "$pk" "$guids" 2>&1) ||
				grep -q "no partition" <<<"$out" ||
				echo "client $id remove $pk $guids: $out" >>"$WORK/errors"
		fi
	done
}

partition_load "$CLIENTS_N" "$CALLS"
ms=$LOAD_MS
[ ! -s "$WORK/errors" ] || fail "calls refused: $(head -5 "$WORK/errors")"
[ ! -e "$WORK/sa-failed" ] || fail "the SA did not answer: $(head -3 "$WORK/sa-failed")"
nsa=$(wc -l <"$WORK/sa-ok")
[ "$nsa" -gt 0 ] || fail "no SA query ran during the load"
echo "$CALLS add/remove calls from $CLIENTS_N clients in $ms ms; $nsa SA query pairs" \
	"answered meanwhile (slowest $(sort -n "$WORK/sa-ok" | tail -1) ms): ok"

# the ports as the API's state says, once the last Sets are answered
"$IBSA" --control "$WORK/control-A" partition show --json >"$WORK/show.json" || fail "show"
CHECK="$SCENARIO_DIR/partition_pkeys.py"
compare() {
	"$FS" ctl pkeys >"$WORK/pkeys"
	"$CHECK" hosts "$WORK/show.json" "$WORK/pkeys"
}
wait_until 10 compare >/dev/null || compare || fail "the ports' P_Key tables differ from the API's state"
compare
# the switch port facing each host: the host's keys of the test's range
for h in $(seq 2 31); do echo "host-$h $("$FS" ctl port "host-$h" 1)"; done >"$WORK/ports"
"$CHECK" facing "$WORK/pkeys" "$WORK/ports" || fail "a switch port facing a host differs from it"
[ "$(lft_sets)" = "$lft0" ] || fail "LFT blocks were written during the partition changes"
echo "every host port and the switch port facing it hold what partition show says; no LFT block: ok"

# the SA's IPoIB broadcast groups, as its state file holds them (an SA query shows a
# requester only its own partitions' groups, a trusted one only members): one for each API
# partition with ip_over_ib, none for a partition gone or without it
groups_as_asked() { "$CHECK" groups "$WORK/show.json" "$WORK/state-A/sa-state"; }
wait_until 5 groups_as_asked >/dev/null || groups_as_asked || fail "the broadcast groups differ from the partitions"
groups_as_asked
echo PASS
