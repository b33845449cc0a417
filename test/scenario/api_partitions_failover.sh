#!/usr/bin/env bash
# The partition API across a failover and a restart (issue 35), as an orchestrator sees it:
# a master A and a standby B, each serving the API (HTTPS, Basic auth, one users file) on
# its own loopback port, the way ib-kubernetes's UFM plugin would be pointed at either.
# The plugin's add goes to A and smpquery finds the P_Key on the ports; A is killed (kill
# -9); B takes over, its ufm_version turns 200 only then (503 as a standby, so a client finds
# the SM that can act), it answers the GET with the members, the P_Keys stay on the ports,
# and a remove through B reaches them. B is then stopped and started: the partition is
# still there, in the GET and on the ports. B's /topology/slurm, refused as a standby, is
# after the takeover what its control socket gives `ibsa topology --slurm`.
# Usage: api_partitions_failover.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need openssl
need smpquery
need sminfo
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
read -r PORT_A PORT_B < <(free_port_pair)
# one certificate for 127.0.0.1 (both SMs' address) and one users file, as a site would
# install on both SM hosts
api_keys
mapfile -t YAML_A < <(api_yaml "$PORT_A")
mapfile -t YAML_B < <(api_yaml "$PORT_B")

# 18 hosts: sm_state_of asks from host-9
start_fabricsim "fattree:radix=6,levels=2"
start_named_ibsmd A host-8 10 "${YAML_A[@]}"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-7 5 "${YAML_B[@]}"
sm_a=$(lid_of host-8) sm_b=$(lid_of host-7)
b_standby() { [ "$(sm_state_of "$sm_b")" = 2 ]; }
wait_until 60 b_standby || fail "B is not a standby: state $(sm_state_of "$sm_b")"
grep -q "serving the partition API on https://127.0.0.1:$PORT_B" "$WORK/B.log" ||
	fail "B serves no API: $(grep api "$WORK/B.log")"

# call WHO METHOD PATH [BODY]: to A's or B's API with the plugin's credentials and headers;
# the status on stdout, the body in $WORK/body
call() {
	local port=$PORT_A
	[ "$1" = B ] && port=$PORT_B
	curl -s --cacert "$WORK/cert.pem" -u ib-kubernetes:k8s-secret -o "$WORK/body" \
		-w '%{http_code}' -X "$2" -H 'Content-Type: application/json; charset=utf-8' \
		${4:+--data-binary "$4"} "https://127.0.0.1:$port$3"
}
expect() { # CODE WHO METHOD PATH [BODY]
	local want=$1 got
	shift
	got=$(call "$@") || fail "curl $*"
	[ "$got" = "$want" ] || fail "$1 $2 $3: $got, not $want: $(cat "$WORK/body")"
}
is() { [ "$(call "${@:2}")" = "$1" ]; } # CODE WHO METHOD PATH: for wait_until

expect 200 A GET /ufmRest/app/ufm_version
expect 503 B GET /ufmRest/app/ufm_version
expect 503 B GET /topology/slurm
echo "A (master, state $(sm_state_of "$sm_a")): ufm_version 200; B (standby): ufm_version and /topology/slurm 503: ok"

guid_of() { "$FS" ctl lids | awk -v h="$1" '$4 == h { print $1 }'; }
g1=$(guid_of host-1) g2=$(guid_of host-2)
hex() { printf '%016x' "$1"; } # as ib-kubernetes writes a GUID: 16 hex digits, no 0x
l1=$(lid_of host-1) l2=$(lid_of host-2)
pkeys_of() { on_sim host-6 smpquery pkeys "$1" 1 2>/dev/null; }
has_key0() { pkeys_of "$1" | grep -q '^ *0: 0x8a0b'; }
lacks_key() { ! pkeys_of "$1" | grep -q 0x8a0b; }
members_are() { # GUID...: the partition 0x0a0b as the GET in $WORK/body gives it
	python3 - "$WORK/body" "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["ip_over_ib"] is True, p
assert sorted(g["guid"] for g in p["guids"]) == sorted(sys.argv[2:]), p
assert all(g["membership"] == "full" and g["index0"] is True for g in p["guids"]), p
PY
}

# AddGuidsToPKey to the master, byte for byte as the plugin formats it
expect 200 A POST /ufmRest/resources/pkeys \
	"{\"pkey\": \"0x0A0B\", \"index0\": true, \"ip_over_ib\": true, \"membership\": \"full\", \"guids\": [\"$(hex "$g1")\",\"$(hex "$g2")\"]}"
wait_until 10 has_key0 "$l1" && wait_until 10 has_key0 "$l2" ||
	fail "after the add, host-1 holds $(pkeys_of "$l1"), host-2 $(pkeys_of "$l2")"
# the standby has the change in its state directory before its master goes
b_has() { grep -q "^pmember 0x0a0b $g1" "$WORK/state-B/partitions-api" &&
	grep -q "^pmember 0x0a0b $g2" "$WORK/state-B/partitions-api"; }
wait_until 20 b_has || fail "B did not get the change: $(cat "$WORK/state-B/partitions-api" 2>&1)"
echo "AddGuidsToPKey 0x0A0B (host-1, host-2) to A: 200; smpquery: 0x8a0b at index 0 of both; synced to B: ok"

# A dies; B's API answers only once B is master with the subnet up
kill -9 "$PID_A"
b_master() { [ "$(sm_state_of "$sm_b")" = 3 ]; }
wait_until 30 b_master || fail "B did not take over: state $(sm_state_of "$sm_b")"
wait_until 30 is 200 B GET /ufmRest/app/ufm_version || fail "B's ufm_version: $(cat "$WORK/body")"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
members_are "$(hex "$g1")" "$(hex "$g2")" || fail "B's GET after the takeover: $(cat "$WORK/body")"
has_key0 "$l1" && has_key0 "$l2" ||
	fail "after the takeover, host-1 holds $(pkeys_of "$l1"), host-2 $(pkeys_of "$l2")"
echo "kill -9 A: B master, its ufm_version 200, the GET gives both members, 0x8a0b still on both ports: ok"

# RemoveGuidsFromPKey through the new master: host-2 leaves, host-1 stays
expect 200 B POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0B\", \"guids\": [\"$(hex "$g2")\"]}"
wait_until 10 lacks_key "$l2" || fail "after B's remove, host-2 holds $(pkeys_of "$l2")"
has_key0 "$l1" || fail "host-1 lost 0x8a0b with host-2's removal: $(pkeys_of "$l1")"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
members_are "$(hex "$g1")" || fail "B's GET after the remove: $(cat "$WORK/body")"
echo "RemoveGuidsFromPKey host-2 through B: 200; smpquery: host-2 without 0x8a0b, host-1 with it: ok"

# the new master's topology over HTTP is its control socket's
expect 200 B GET /topology/slurm
"$IBSA" --control "$WORK/control-B" topology --slurm >"$WORK/slurm.ibsa" || fail "ibsa topology --slurm"
cmp -s "$WORK/body" "$WORK/slurm.ibsa" ||
	fail "B's /topology/slurm differs from ibsa's: $(diff "$WORK/body" "$WORK/slurm.ibsa")"
echo "B's /topology/slurm after the takeover: ibsa topology --slurm's, byte for byte: ok"

# B stopped and started: the partition comes back from its state directory
stop_pids "$PID_B"
start_named_ibsmd B host-7 5 "${YAML_B[@]}"
wait_until 60 is 200 B GET /ufmRest/app/ufm_version || fail "B did not come back: $(cat "$WORK/body" 2>&1)"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
members_are "$(hex "$g1")" || fail "B's GET after its restart: $(cat "$WORK/body")"
wait_until 10 has_key0 "$l1" || fail "after B's restart, host-1 holds $(pkeys_of "$l1")"
lacks_key "$l2" || fail "after B's restart, host-2 holds $(pkeys_of "$l2")"
echo "B restarted: ufm_version 200, the GET gives host-1, smpquery: host-1 with 0x8a0b, host-2 without: ok"
echo PASS
