#!/usr/bin/env bash
# Soak: the fabric under MAD loss with links, switches and hosts going and coming, while
# clients join and leave multicast groups, register services with leases and subscribe to
# events, for SOAK_SECONDS (30 in the suite; SOAK_SECONDS=3600 for the long one) on
# SOAK_FABRIC (the 2,592-host tree). Afterwards, the faults healed, the loss gone and the
# links the SM held for flapping released (ibsa release):
# fabricsim verify passes; each MLID's MFT bits deliver to the SA's members of its group;
# once every member has left, no MLID is left in any switch's MFT
# and only the broadcast groups remain; every service's lease has run out and none is
# listed; the subscriptions of hosts that left are gone; and ibsmd's memory is flat (the
# floor of its live heap, ibsmd_heap_bytes in the metrics file, over the second half of the
# soak within 8% of the first half's, its first fifth left out).
# Usage: soak.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

SECS=${SOAK_SECONDS:-30}
FABRIC=${SOAK_FABRIC:-fattree:radix=36,levels=3,hosts=2592}
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
CHURN="$BUILD/test/mcast_churn"
export IBSMD_UP_TIMEOUT=240
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=0"
start_fabricsim "$FABRIC"
# the metrics file every second for the memory samples; the performance manager every 10 s,
# so that it reads counters through the faults too and its first sweep (which takes its
# per-port state) begins before the samples are judged
SIM_HOST=host-1 start_ibsmd --sweep-interval 5 --config <(printf 'metrics_interval: 1\npm_interval: 10\n')
wait_until 120 verify_passes || fail "not up: $("$FS" verify | tail -3)"
pm_started() { awk '$1 == "ibsmd_pm_ports" && $2 > 0 { ok = 1 } END { exit !ok }' "$WORK/state/ibsmd.prom"; }
wait_until 60 pm_started || fail "no performance manager sweep began: $(grep pm_ "$WORK/state/ibsmd.prom")"
nhosts=$("$FS" ctl lids | grep -c ' host-') || true
links=() # leaf uplinks (leaf-N, or leaf-POD-N in three levels): "NODE PORT"
while read -r node port; do links+=("$node $port"); done < <(
	for l in $("$FS" ctl lids | awk '$4 ~ /^leaf/ { print $4 }' | sed -n '2,9p'); do
		for p in $(seq 1 64); do
			"$FS" ctl port "$l" "$p" 2>/dev/null | grep -q 'peer "\(spine\|agg\|core\)' && echo "$l $p"
		done
	done | head -16)
[ ${#links[@]} -gt 0 ] || fail "no leaf uplinks found"
resetter=$("$FS" ctl lids | awk '!r && $4 ~ /^(spine|agg)/ { r = $4 } END { print r }') # it resets
cyclers=(host-101 host-102 host-103 host-104 host-105 host-106) # hosts that power-cycle
echo "soak: $SECS s on $FABRIC ($nhosts hosts), 10% MAD loss"

"$FS" ctl drop 10 >/dev/null
end=$((SECONDS + SECS))
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$IBSMD_PID/status"; }
heap() { awk '$1 == "ibsmd_heap_bytes" { printf "%d", $2 / 1024 }' "$WORK/state/ibsmd.prom" 2>/dev/null; }
( # ibsmd's memory, a sample a second: RSS and the live heap (the metrics file's), in kB
	while [ $SECONDS -lt $end ]; do
		echo "$SECONDS $(rss) $(heap)"
		sleep 1
	done
) >"$WORK/rss" &
PIDS+=($!)
LOOPS=($!)
( # links flap: one at a time, down for 0.3 s
	while [ $SECONDS -lt $end ]; do
		l=${links[$((RANDOM % ${#links[@]}))]}
		"$FS" ctl link down $l >/dev/null
		sleep 0.3
		"$FS" ctl link up $l >/dev/null
		sleep 0.7
	done
) &
PIDS+=($!)
LOOPS+=($!)
( # a spine resets now and then
	while [ $SECONDS -lt $end ]; do
		sleep 7
		"$FS" ctl node remove "$resetter" >/dev/null
		sleep 0.5
		"$FS" ctl node add "$resetter" >/dev/null
	done
) >/dev/null 2>&1 &
PIDS+=($!)
LOOPS+=($!)
( # hosts power-cycle, their event subscribers with them
	while [ $SECONDS -lt $end ]; do
		h=${cyclers[$((RANDOM % ${#cyclers[@]}))]}
		(SIM_HOST=$h exec "$IBSA" --transport sim events --timeout 600 >/dev/null 2>&1) &
		sleep 1
		"$FS" ctl node remove "$h" >/dev/null
		kill -9 $! 2>/dev/null || true
		sleep 0.5
		"$FS" ctl node add "$h" >/dev/null
	done
) >/dev/null 2>&1 &
PIDS+=($!)
LOOPS+=($!)
( # services with short leases
	i=0
	while [ $SECONDS -lt $end ]; do
		i=$((i + 1))
		SIM_HOST=host-$((i % 50 + 2)) "$IBSA" --transport sim --timeout 300 services add \
			$((0x50000 + i)) --name "soak-$i" --lease 3 >/dev/null 2>&1 || true
		sleep 0.2
	done
) &
PIDS+=($!)
LOOPS+=($!)
runs=0 churn_ok=0
while [ $SECONDS -lt $end ]; do # groups: joins and leaves, many at once
	runs=$((runs + 1))
	if "$CHURN" --hosts 40 --groups 12 --ops 200 --seed "$runs" >"$WORK/members" 2>>"$WORK/churn.log"; then
		churn_ok=$((churn_ok + 1))
	fi
done
wait "${LOOPS[@]}" 2>/dev/null || true # the background loops end at $end
echo "soak over: $runs group churn runs ($churn_ok without a lost answer)"

# heal: no loss, every link and node back
"$FS" ctl drop 0 >/dev/null
for l in "${links[@]}"; do "$FS" ctl link up $l >/dev/null; done
"$FS" ctl node add "$resetter" >/dev/null 2>&1 || true
for h in "${cyclers[@]}"; do "$FS" ctl node add "$h" >/dev/null 2>&1 || true; done
wait_until 120 verify_passes || fail "not whole after the soak: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
# links that went up and down link_flap_threshold times in its window were disabled for
# link_flap_hold_time, rightly: the uplinks flapped, and a host power-cycled five times in
# 20 s looks no different. The cables mended, an administrator releases them.
released=$("$IBSA" --control "$WORK/control" release) || fail "ibsa release: $released"
wait_until 120 verify_passes || fail "not whole after ibsa release: $("$FS" verify | grep -E 'problem|verdict' | head -4)"
echo "healed ($released): verify PASS"
wait_until 20 mfts_follow_sa host-2 ||
	fail "after the soak, MFTs and the SA's members differ: $(head -3 "$WORK/mfts-vs-sa")"
echo "MFTs deliver each group to its members as the SA lists them"

# every member leaves (the SA's own list of them): groups go, and their MLIDs from the MFTs
SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json mcast >"$WORK/mcast.json" || fail "ibsa mcast"
python3 - "$WORK/mcast.json" >"$WORK/sa-members" <<'PY'
import ipaddress, json, sys
for r in json.load(open(sys.argv[1])):
    guid = int(ipaddress.IPv6Address(r["port_gid"])) & ((1 << 64) - 1)
    print(r["mgid"], "0x%016x" % guid)
PY
"$CHURN" --hosts 40 --groups 12 --ops 0 --members "$WORK/sa-members" --leave-all >/dev/null 2>>"$WORK/churn.log" ||
	fail "leaving every group: $(tail -3 "$WORK/churn.log")"
groups_left() {
	SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json mcast |
		python3 -c 'import json,sys; print(len({r["mgid"] for r in json.load(sys.stdin)}))'
}
mlids_left() { "$FS" verify --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["multicast"]["mlids"])'; }
wait_until 20 sh -c "[ \"\$('$FS' verify --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"multicast\"][\"mlids\"])')\" = 0 ]" ||
	fail "MLIDs left in the MFTs after every member left: $(mlids_left) (the SA lists $(groups_left) groups)"
echo "every member left: no MLID in any MFT"

# services: every lease ran out
wait_until 10 sh -c "[ \"\$(SIM_HOST=host-2 '$IBSA' --transport sim --sm-key 1 --json services | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')\" = 0 ]" ||
	fail "services left after their leases: $(SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json services | head -c 300)"
echo "every service's lease ran out: none listed"

# subscriptions: the cyclers' subscribers are dead; once their ports have gone and come
# back, none of theirs is left
cas() { "$IBSA" --control "$WORK/control" --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["subnet"]["cas"])'; }
cas_are() { [ "$(cas)" = "$1" ]; }
# every host seen back first (the heal put the cyclers back; the SM may not have seen the last)
# the cyclers as the fabric has them, and the fabric's journal of them, for a failure's cause
cyclers_seen() {
	local h line peer pat=
	for h in "${cyclers[@]}"; do
		line=$("$FS" ctl port "$h" 1 | head -1)
		peer=$(sed -n 's/.*peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p' <<<"$line")
		echo "$h: $line; $peer: $("$FS" ctl port $peer | head -1)"
		pat+="|$h |$peer "
	done
	"$FS" ctl journal | grep -E "${pat#|}" | tail -30
}
wait_until 20 cas_are "$nhosts" ||
	fail "the SM does not see every host back: $(cas) CAs of $nhosts
$(cyclers_seen)"
for h in "${cyclers[@]}"; do "$FS" ctl node remove "$h" >/dev/null; done
wait_until 20 cas_are $((nhosts - ${#cyclers[@]})) || fail "the SM does not see the cyclers gone: $(cas) CAs of $nhosts"
for h in "${cyclers[@]}"; do "$FS" ctl node add "$h" >/dev/null; done
subs() { SIM_HOST=host-2 "$IBSA" --transport sim --sm-key 1 --json informinfo | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
wait_until 20 sh -c "[ \"\$(SIM_HOST=host-2 '$IBSA' --transport sim --sm-key 1 --json informinfo | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')\" = 0 ]" ||
	fail "subscriptions of ports that left remain: $(subs)"
echo "no subscription left of hosts that left"

# memory: the live heap's floor (its least, between the sweeps' passing allocations) over the
# second half of the soak against the first's, the first fifth left out (the heap settles
# there); RSS shown beside it (it also keeps what the allocator holds for reuse)
python3 - "$WORK/rss" <<'PY' || fail "ibsmd's memory grew"
import sys
lines = [l.split() for l in open(sys.argv[1])]
s = [tuple(map(int, l)) for l in lines if len(l) == 3]
if len(lines) >= 10 and len(s) < len(lines) * 0.8:
    sys.exit(f"memory: only {len(s)} of {len(lines)} samples have ibsmd_heap_bytes")
if len(s) < 10:
    print(f"memory: only {len(s)} samples, not judged"); sys.exit(0)
n = len(s)
first, second = s[n // 5 : 3 * n // 5], s[3 * n // 5 :]
ha, hb = min(r[2] for r in first), min(r[2] for r in second)
ra, rb = (sum(r[1] for r in w) / len(w) for w in (first, second))
if min(ha, hb) < 1024:
    sys.exit(f"memory: ibsmd_heap_bytes says {min(ha, hb)} kB: not a figure to judge by")
print(f"memory: heap in use at least {ha / 1024:.1f} MB in the first half, {hb / 1024:.1f} MB "
      f"in the second ({(hb / ha - 1) * 100:+.1f}%); RSS {ra / 1024:.0f} MB, {rb / 1024:.0f} MB "
      f"({(rb / ra - 1) * 100:+.1f}%)")
sys.exit(0 if hb <= ha * 1.08 else 1)
PY
kill -0 "$IBSMD_PID" || fail "ibsmd died"
echo "soak: ok"
