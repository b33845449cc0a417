#!/usr/bin/env bash
# ServiceRecords as clients use them: register with and without a lease, find with ibsa and
# with saquery (infiniband-diags, under libumad2sim.so), renew, delete; a lease runs out; a
# service in a partition is seen only by that partition's members; a bad GID or a partition
# the port is not in is refused with the right status; a service goes when its port leaves
# the fabric.
# Usage: sa_services.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need saquery
IBSA="$BUILD/cli/ibsa"
as() { # HOST ibsa-args...: ibsa from that host
	local h=$1
	shift
	SIM_HOST=$h "$IBSA" --transport sim "$@"
}
count() { # HOST [ID]: how many services that host sees
	as "$1" --json services ${2:-} | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

cat >"$WORK/ibsmd.yaml" <<'EOF'
partitions:
  - name: storage
    pkey: 0x0002
    members: [0x0000000000100005, 0x0000000000100007] # host-3, host-4
EOF
start_fabricsim "fattree:radix=8,levels=2"
# info: the log says when a lease begins and ends
SIM_HOST=host-32 start_ibsmd --sweep-interval 0 --config "$WORK/ibsmd.yaml" --log-level info

# the lease comes below: a 3 s one here would bind the checks between to the script's pace
as host-1 services add 0x1000 --name "scratch fs" >/dev/null || fail "register host-1's"
as host-2 services add 0x1000 --name "home fs" >/dev/null || fail "register without a lease"
as host-3 services add 0x2000 --name "storage-only" --pkey 0x8002 >/dev/null ||
	fail "register in a partition the port is in"
[ "$(count host-4)" = 3 ] || fail "a member of partition 2 should see 3 services: $(as host-4 services)"
[ "$(count host-5)" = 2 ] || fail "a non-member should not see partition 2's service: $(as host-5 services)"
[ "$(count host-5 0x1000)" = 2 ] || fail "selecting by ServiceID"
echo "registered; partition 2's service hidden from non-members: ok"

out=$(as host-3 services add 0x3000 --gid fe80::99:1 2>&1) && fail "a GID of no port was accepted"
grep -q "0x0500" <<<"$out" || fail "wrong status for a GID of no port: $out"
out=$(as host-5 services add 0x3000 --pkey 0x8002 2>&1) && fail "a port registered in a partition it is not in"
grep -q "0x0700" <<<"$out" || fail "wrong status for a partition the port is not in: $out"
out=$(as host-5 services delete 0x7777 2>&1) && fail "deleting a service that does not exist succeeded"
echo "bad GID (0x0500), foreign partition (0x0700), unknown service refused: ok"

# the lease of host-1's service runs out; host-2's has none
as host-1 services add 0x1000 --name "scratch fs" --lease 3 >/dev/null || fail "register with a lease"
lease_over() {
	as host-5 --json services >"$WORK/after.json" &&
		python3 -c 'import json, sys; sys.exit(sorted(r["name"] for r in json.load(open(sys.argv[1]))) != ["home fs"])' \
			"$WORK/after.json"
}
wait_until 10 lease_over || fail "after the lease: $(cat "$WORK/after.json")"
# not too soon, on the daemon's clock: the lease starts at the loop turn the registration is
# logged in (a few ms earlier under load), so 0.1 s is left for that
svc="service 0x0000000000001000 of GID port 0x0000000000100001"
t0=$(log_seconds "$(grep -m1 "$svc: registered, lease 3 s" "$WORK/ibsmd.log")")
t1=$(log_seconds "$(grep -m1 "$svc: lease ended" "$WORK/ibsmd.log")")
[ -n "$t0" ] && [ -n "$t1" ] || fail "the lease's start or end is not logged: $(grep "$svc" "$WORK/ibsmd.log")"
lease=$(awk -v a="$t0" -v b="$t1" 'BEGIN { d = b - a; if (d < 0) d += 86400; printf "%.3f", d }')
awk -v d="$lease" 'BEGIN { exit !(d > 2.9) }' || fail "a 3 s lease ended after $lease s"
echo "lease ran out, $lease s after the registration: ok"

# renewing keeps one record; delete removes it
as host-2 services add 0x1000 --name "home fs" --lease 100 >/dev/null || fail "renew"
[ "$(count host-5)" = 1 ] || fail "renewing made a second record"
# saquery under libumad2sim.so takes only the first RMPP segment: ask it while one service is
# all there is
SIM_HOST=host-5 umad2sim saquery -S >"$WORK/saquery.txt" 2>&1 || true
grep -q "ServiceName.*home fs" "$WORK/saquery.txt" && grep -q "ServiceID.*0x0*1000" "$WORK/saquery.txt" ||
	fail "saquery -S does not show the service: $(cat "$WORK/saquery.txt")"
echo "saquery -S shows it: ok"
as host-2 services delete 0x1000 >/dev/null || fail "delete"
[ "$(count host-5)" = 0 ] || fail "delete left the record"
echo "renew and delete: ok"

# a service goes with its port
as host-4 services add 0x4000 --name "leaves" >/dev/null || fail "register on host-4"
"$BUILD/test/fabricsim/fabricsim" ctl node remove host-4 >/dev/null
wait_until 20 bash -c "[ \"\$(SIM_HOST=host-5 '$IBSA' --transport sim --json services 0x4000)\" = '[]' ]" ||
	fail "the service of a port that left is still there"
echo "a service goes when its port leaves: ok"
