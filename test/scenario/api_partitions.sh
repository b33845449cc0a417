#!/usr/bin/env bash
# The partition API as ib-kubernetes's UFM plugin drives it, over HTTPS with Basic auth
# against a users file written by `ibsa passwd`: exactly its requests (ufm_version; POST
# /ufmRest/resources/pkeys with its body; GET /ufmRest/resources/pkeys/?guids_data=true;
# POST /ufmRest/actions/remove_guids_from_pkey), then the rest of UFM's P_Key requests (PUT
# with memberships, DELETE of GUIDs and of the partition, /pkeys/add and qos_conf with the
# PathRecords they cap), the P_Keys checked on the ports
# with smpquery after each change, the answers' shapes as UFM's; the topology (GET /topology/slurm,
# /topology/dot) as `ibsa topology` gives it. Wrong credentials get 401 (logged),
# bad bodies 400 with the reason; a users file others can read, and plain HTTP off
# loopback, stop the daemon from starting.
# Usage: api_partitions.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need openssl
need smpquery
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
PORT=$((20000 + ($$ + 7) % 20000))
URL="https://127.0.0.1:$PORT"

# a self-signed certificate for 127.0.0.1, which curl checks as ib-kubernetes does with
# UFM_CERTIFICATE
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null || fail "openssl req"
chmod 600 "$WORK/key.pem"
{
	echo "# the partition API's users"
	printf 'k8s-secret\n' | "$IBSA" passwd ib-kubernetes
	printf 'other pass\n' | "$IBSA" passwd operator
} >"$WORK/users" || fail "ibsa passwd"
chmod 600 "$WORK/users"
grep -q '^ib-kubernetes:\$argon2id\$' "$WORK/users" || fail "ibsa passwd wrote: $(cat "$WORK/users")"
cat >"$WORK/ibsmd.yaml" <<EOF2
sweep_interval: 0
api_listen: "127.0.0.1:$PORT"
api_tls_cert: "$WORK/cert.pem"
api_tls_key: "$WORK/key.pem"
api_users_file: "$WORK/users"
EOF2

start_fabricsim "fattree:radix=4,levels=2"
SIM_HOST=host-8 start_ibsmd --config "$WORK/ibsmd.yaml"
grep -q "serving the partition API on https://127.0.0.1:$PORT" "$WORK/ibsmd.log" ||
	fail "no API: $(grep api "$WORK/ibsmd.log")"

# call METHOD PATH [BODY] [USER:PASS]: the status on stdout, the body in $WORK/body, the
# headers in $WORK/headers
call() {
	local auth=${4:-ib-kubernetes:k8s-secret}
	curl -s --cacert "$WORK/cert.pem" -u "$auth" -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' \
		-X "$1" -H 'Content-Type: application/json; charset=utf-8' \
		${3:+--data-binary "$3"} "$URL$2"
}
expect() { # CODE METHOD PATH [BODY] [AUTH]
	local want=$1 got
	shift
	got=$(call "$@") || fail "curl $*"
	[ "$got" = "$want" ] || fail "$1 $2: $got, not $want: $(cat "$WORK/body")"
}

expect 200 GET /ufmRest/app/ufm_version
python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["ufm_release_version"]; assert v.startswith("ibsmd "), v' \
	"$WORK/body" || fail "ufm_version: $(cat "$WORK/body")"
echo "ufm_version over HTTPS (certificate checked), Basic auth: 200, $(cat "$WORK/body"): ok"

# wrong credentials: 401 with a Basic challenge, and a log line naming the peer
expect 401 GET /ufmRest/app/ufm_version "" ib-kubernetes:wrong
expect 401 GET /ufmRest/app/ufm_version "" nobody:k8s-secret
code=$(curl -s --cacert "$WORK/cert.pem" -o /dev/null -D "$WORK/headers" -w '%{http_code}' \
	"$URL/ufmRest/app/ufm_version")
[ "$code" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="ibsmd"' "$WORK/headers" ||
	fail "no credentials: $code $(cat "$WORK/headers")"
grep -q 'api.*127.0.0.1: a wrong password; answered 401' "$WORK/ibsmd.log" ||
	fail "a wrong password is not logged: $(grep api "$WORK/ibsmd.log")"
expect 401 POST /ufmRest/resources/pkeys '{"pkey": "0x0A0B", "guids": []}' operator:wrong
echo "wrong password, unknown user, no credentials: 401 with a Basic challenge, logged: ok"

# the topology on the same endpoint, behind the same Basic auth: what the control socket
# gives ibsa topology, byte for byte, with its content types
expect 401 GET /topology/slurm "" ib-kubernetes:wrong
expect 401 GET /topology/dot "" nobody:k8s-secret
expect 200 GET /topology/slurm
"$IBSA" --control "$WORK/control" topology --slurm >"$WORK/slurm.ibsa" || fail "ibsa topology --slurm"
cmp -s "$WORK/body" "$WORK/slurm.ibsa" ||
	fail "/topology/slurm differs from ibsa's: $(diff "$WORK/body" "$WORK/slurm.ibsa")"
grep -q "^SwitchName=leaf-1 Nodes=host-\[1-2\]" "$WORK/body" || fail "/topology/slurm: $(cat "$WORK/body")"
grep -qi '^Content-Type: text/plain' "$WORK/headers" &&
	grep -qi '^X-Ibsmd-Topology-Problems: 0' "$WORK/headers" ||
	fail "/topology/slurm headers: $(cat "$WORK/headers")"
expect 200 GET /topology/dot
"$IBSA" --control "$WORK/control" topology --dot >"$WORK/dot.ibsa" || fail "ibsa topology --dot"
cmp -s "$WORK/body" "$WORK/dot.ibsa" ||
	fail "/topology/dot differs from ibsa's: $(diff "$WORK/body" "$WORK/dot.ibsa")"
grep -qi '^Content-Type: text/vnd.graphviz' "$WORK/headers" ||
	fail "/topology/dot headers: $(cat "$WORK/headers")"
expect 405 POST /topology/slurm
expect 404 GET /topology/json
echo "GET /topology/slurm and /topology/dot: 401 without the right credentials, else ibsa topology's text, text/plain and text/vnd.graphviz: ok"

# bad bodies: 400, saying what is wrong
expect 400 POST /ufmRest/resources/pkeys '{"pkey": "0x0A0B", "guids": ["0x1"'
grep -q 'not JSON' "$WORK/body" || fail "truncated JSON: $(cat "$WORK/body")"
expect 400 POST /ufmRest/resources/pkeys '{"pkey": "0x7fff", "guids": []}'
grep -q '0x7ffe' "$WORK/body" || fail "P_Key 0x7fff: $(cat "$WORK/body")"
expect 400 POST /ufmRest/resources/pkeys '{"pkey": "0x0A0B", "membership": "both", "guids": []}'
expect 400 POST /ufmRest/resources/pkeys '{"pkey": "0x0A0B", "mtu_limit": 4, "guids": []}'
expect 400 POST /ufmRest/actions/remove_guids_from_pkey '{"pkey": "0x0A0B", "guids": ["xyz"]}'
expect 400 POST /ufmRest/actions/remove_guids_from_pkey '{"guids": []}'
expect 404 GET /ufmRest/resources/systems
expect 405 GET /ufmRest/actions/remove_guids_from_pkey
echo "bad JSON, P_Key, membership, unknown parameter, GUID, missing pkey: 400 with the reason: ok"

guid_of() { "$FS" ctl lids | awk -v h="$1" '$4 == h { print $1 }'; }
g1=$(guid_of host-1)
g2=$(guid_of host-2)
[ -n "$g1" ] && [ -n "$g2" ] || fail "no GUIDs for host-1, host-2"
hex() { printf '%016x' "$1"; } # as ib-kubernetes writes a GUID: 16 hex digits, no 0x
l1=$(lid_of host-1)
l2=$(lid_of host-2)
pkeys_of() { on_sim host-8 smpquery pkeys "$1" 1; }

# AddGuidsToPKey, byte for byte as the plugin formats it
expect 200 POST /ufmRest/resources/pkeys \
	"{\"pkey\": \"0x0A0B\", \"index0\": true, \"ip_over_ib\": true, \"membership\": \"full\", \"guids\": [\"$(hex "$g1")\",\"$(hex "$g2")\"]}"
# index0: the partition's key (full member, 0x8a0b) at index 0 of both hosts' tables
has_key0() { pkeys_of "$1" | grep -q '^ *0: 0x8a0b'; }
wait_until 10 has_key0 "$l1" && wait_until 10 has_key0 "$l2" ||
	fail "after the add, host-1 holds $(pkeys_of "$l1"), host-2 $(pkeys_of "$l2")"
echo "AddGuidsToPKey 0x0A0B for host-1 and host-2: 200; smpquery: 0x8a0b at index 0 of both: ok"

# ListGuidsInUse: every partition with its GUIDs, as UFM shapes them
expect 200 GET '/ufmRest/resources/pkeys/?guids_data=true'
python3 - "$WORK/body" "$(hex "$g1")" "$(hex "$g2")" <<'PY' || fail "pkeys list: $(cat "$WORK/body")"
import json, sys
keys = json.load(open(sys.argv[1]))
p = keys["0xa0b"]
assert p["partition"] and p["ip_over_ib"] is True, p
assert sorted(g["guid"] for g in p["guids"]) == sorted(sys.argv[2:]), p
assert all(g["membership"] == "full" and g["index0"] is True for g in p["guids"]), p
PY
expect 200 GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
python3 - "$WORK/body" "$(hex "$g1")" "$(hex "$g2")" <<'PY' || fail "pkey 0x0a0b: $(cat "$WORK/body")"
import json, sys
p = json.load(open(sys.argv[1]))
assert sorted(g["guid"] for g in p["guids"]) == sorted(sys.argv[2:]), p
PY
expect 404 GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
echo "GET pkeys/?guids_data=true and pkeys/0x0a0b: both GUIDs, full, index0, in UFM's shape; an unknown P_Key 404: ok"

# RemoveGuidsFromPKey, as the plugin formats it: host-2 leaves, host-1 stays
expect 200 POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0B\", \"guids\": [\"$(hex "$g2")\"]}"
gone2() { ! pkeys_of "$l2" | grep -q 0x8a0b; }
wait_until 10 gone2 || fail "after the remove, host-2 holds $(pkeys_of "$l2")"
has_key0 "$l1" || fail "host-1 lost 0x8a0b: $(pkeys_of "$l1")"
expect 200 GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
python3 - "$WORK/body" "$(hex "$g1")" <<'PY' || fail "pkey 0x0a0b after remove: $(cat "$WORK/body")"
import json, sys
p = json.load(open(sys.argv[1]))
assert [g["guid"] for g in p["guids"]] == [sys.argv[2]], p
PY
# the same request again (a retry) is no error
expect 200 POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0B\", \"guids\": [\"$(hex "$g2")\"]}"
echo "RemoveGuidsFromPKey host-2: 200; smpquery: host-2 without 0x8a0b, host-1 with it; a retry 200: ok"
grep -q "https ib-kubernetes@127.0.0.1" "$WORK/ibsmd.log" ||
	fail "the changes are not logged with who asked: $(grep api "$WORK/ibsmd.log")"

# the rest of UFM's P_Key requests: PUT sets the members (each with its own membership),
# DELETE .../guids/G removes some, DELETE .../PKEY the partition
l3=$(lid_of host-3)
g3=$(guid_of host-3)
expect 200 PUT /ufmRest/resources/pkeys \
	"{\"pkey\": \"0x0A0B\", \"index0\": false, \"guids\": [\"$(hex "$g2")\", \"$(hex "$g3")\"], \"memberships\": [\"limited\", \"full\"]}"
has() { pkeys_of "$1" | grep -q "$2"; }
lacks() { ! pkeys_of "$1" | grep -q "$2"; }
wait_until 10 lacks "$l1" 0x8a0b && wait_until 10 has "$l2" ' 0x0a0b' && wait_until 10 has "$l3" 0x8a0b ||
	fail "after the PUT: host-1 $(pkeys_of "$l1"), host-2 $(pkeys_of "$l2"), host-3 $(pkeys_of "$l3")"
has "$l2" 0x8a0b && fail "host-2, set limited, holds the full key: $(pkeys_of "$l2")"
expect 200 GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
python3 - "$WORK/body" "$(hex "$g2")" "$(hex "$g3")" <<'PY' || fail "after the PUT: $(cat "$WORK/body")"
import json, sys
p = json.load(open(sys.argv[1]))
m = {g["guid"]: g["membership"] for g in p["guids"]}
assert m == {sys.argv[2]: "limited", sys.argv[3]: "full"}, p
PY
expect 400 PUT /ufmRest/resources/pkeys \
	"{\"pkey\": \"0x0A0B\", \"guids\": [\"$(hex "$g2")\"], \"memberships\": [\"full\", \"full\"]}"
expect 200 DELETE "/ufmRest/resources/pkeys/0x0a0b/guids/$(hex "$g2")"
wait_until 10 lacks "$l2" 0x0a0b || fail "after DELETE .../guids: host-2 $(pkeys_of "$l2")"
has "$l3" 0x8a0b || fail "host-3 lost its key with host-2's removal"
expect 400 DELETE "/ufmRest/resources/pkeys/0x0a0b/guids/xyz"
expect 200 DELETE /ufmRest/resources/pkeys/0x0a0b
wait_until 10 lacks "$l3" 0x8a0b || fail "after DELETE of the partition: host-3 $(pkeys_of "$l3")"
expect 404 GET '/ufmRest/resources/pkeys/0x0a0b?guids_data=true'
expect 404 DELETE /ufmRest/resources/pkeys/0x0a0b
expect 405 PUT /ufmRest/actions/remove_guids_from_pkey '{}'
echo "PUT (host-2 limited, host-3 full, host-1 out), DELETE .../guids/host-2, DELETE the partition: smpquery follows each: ok"

# A partition without members, with UFM's QoS (POST /pkeys/add as its guide's example has
# it): its GET with qos_conf=true says so, its members' PathRecords are capped to it (MTU
# 2048, 2.5 Gb/s, SL 3), qos_conf changes the cap, and it stays without members until deleted.
expect 200 POST /ufmRest/resources/pkeys/add \
	'{"pkey":"0x12","index0":false,"ip_over_ib":true,"mtu_limit":2,"service_level":3,"rate_limit":2.5,"partition_name":"user_partition"}'
qos_is() { # PKEY MTU_KB SL RATE: the partition's qos_conf as GET shows it
	expect 200 GET "/ufmRest/resources/pkeys/$1?qos_conf=true"
	python3 - "$WORK/body" "$2" "$3" "$4" <<'PY' || fail "qos_conf of $1: $(cat "$WORK/body")"
import json, sys
p = json.load(open(sys.argv[1]))
q = p["qos_conf"]
assert p["partition"] == "user_partition" and p["ip_over_ib"] is True, p
want = {"mtu_limit": json.loads(sys.argv[2]), "service_level": int(sys.argv[3]),
        "rate_limit": json.loads(sys.argv[4])}
assert q == want and type(q["mtu_limit"]) is int, (q, want)
PY
}
qos_is 0x12 2 3 2.5
has_key() { pkeys_of "$2" | grep -q "$1"; }
expect 200 POST /ufmRest/resources/pkeys \
	"{\"pkey\": \"0x12\", \"index0\": false, \"ip_over_ib\": true, \"guids\": [\"$(hex "$g1")\",\"$(hex "$g2")\"]}"
wait_until 10 has_key 0x8012 "$l1" && wait_until 10 has_key 0x8012 "$l2" ||
	fail "after the add to 0x12, host-1 holds $(pkeys_of "$l1"), host-2 $(pkeys_of "$l2")"
path12() { # "SL MTU RATE" of host-1's PathRecord to host-2 on P_Key 0x12
	SIM_HOST=host-1 "$IBSA" --transport sim --json paths "$l1" "$l2" --pkey 0x8012 >"$WORK/path.json" ||
		fail "ibsa paths on 0x12"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r["sl"], r["mtu"], r["rate"])' "$WORK/path.json"
}
[ "$(path12)" = "3 4 2" ] || fail "PathRecord on 0x12: SL MTU rate $(path12), want 3 4 (2048) 2 (2.5 Gb/s)"
expect 200 PUT /ufmRest/resources/pkeys/qos_conf '{"pkey":"0x12","rate_limit":10}'
qos_is 0x12 2 3 10
[ "$(path12)" = "3 4 3" ] || fail "PathRecord on 0x12 after qos_conf: $(path12), want rate 3 (10 Gb/s)"
expect 200 GET '/ufmRest/resources/pkeys?qos_conf=true'
python3 -c 'import json,sys; k=json.load(open(sys.argv[1])); assert k["0x12"]["qos_conf"]["rate_limit"] == 10, k' \
	"$WORK/body" || fail "the list with qos_conf: $(cat "$WORK/body")"
expect 200 DELETE "/ufmRest/resources/pkeys/0x12/guids/$(hex "$g1"),$(hex "$g2")"
wait_until 10 lacks "$l1" 0x8012 || fail "after the members left 0x12: host-1 $(pkeys_of "$l1")"
expect 200 GET '/ufmRest/resources/pkeys/0x12?guids_data=true'
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["guids"] == [], p' "$WORK/body" ||
	fail "0x12 without members: $(cat "$WORK/body")"
expect 400 POST /ufmRest/resources/pkeys/add '{"pkey":"0x13","mtu_limit":3}'
grep -q mtu_limit "$WORK/body" || fail "a bad mtu_limit: $(cat "$WORK/body")"
expect 404 PUT /ufmRest/resources/pkeys/qos_conf '{"pkey":"0x14","service_level":1}'
expect 405 GET /ufmRest/resources/pkeys/add
expect 200 DELETE /ufmRest/resources/pkeys/0x12
expect 404 GET '/ufmRest/resources/pkeys/0x12'
echo "POST pkeys/add with QoS, GET qos_conf, PathRecords capped (SL 3, 2048, 2.5 then 10 Gb/s by PUT qos_conf), kept without members, DELETE: ok"

# refused at start: a users file others can read, plain HTTP off loopback
stop_pids "$IBSMD_PID"
refused() { # WHAT CONFIG: ibsmd must exit non-zero at once, saying why
	local rc=0
	(cd "$WORK" && SIM_HOST=host-8 timeout 60 "$BUILD/daemon/ibsmd" --transport sim \
		--state-dir "$WORK/state" --control-socket "$WORK/control2" --config "$2" \
		>"$WORK/refused.out" 2>"$WORK/refused.log") || rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "$1: ibsmd ran (rc $rc): $(tail -5 "$WORK/refused.log")"
}
chmod 644 "$WORK/users"
refused "users file 0644" "$WORK/ibsmd.yaml"
grep -q "api_users_file $WORK/users: mode 0644" "$WORK/refused.log" ||
	fail "the 0644 users file is not named: $(cat "$WORK/refused.log")"
chmod 600 "$WORK/users"
printf 'api_listen: ":%s"\napi_users_file: "%s"\n' "$PORT" "$WORK/users" >"$WORK/plain.yaml"
refused "plain HTTP on every address" "$WORK/plain.yaml"
grep -q 'not a loopback address.*api_tls_cert and api_tls_key' "$WORK/refused.log" ||
	fail "plain HTTP off loopback: $(cat "$WORK/refused.log")"
echo "a users file of mode 0644, plain HTTP on every address: ibsmd refuses to start, saying why: ok"
