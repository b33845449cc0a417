#!/usr/bin/env bash
# The partition API under load (issue 35): 10 clients at once send ib-kubernetes's UFM
# plugin's requests (POST /ufmRest/resources/pkeys, POST
# /ufmRest/actions/remove_guids_from_pkey; HTTPS, Basic auth as one shared user, one curl and
# one TLS connection per call) on 4 P_Keys and 30 hosts, while the SA is asked for nodes and
# paths all along. Every call must be answered 200 (a remove may find the partition gone by
# another's: 404); a 429 from the password-check rationing fails the test, as an
# orchestrator would see it fail. Then every host port's P_Key table and the switch port
# facing it (fabricsim's own dump) hold exactly what GET /ufmRest/resources/pkeys?guids_data=
# true says, which is what `ibsa partition show --json` says; the IPoIB broadcast groups are
# the partitions'; no LFT block was written; every SA query was answered.
# PARTITION_LOAD_CALLS: the calls in all (default 500 for CI, ~10 s under ASan; the issue's figure is 1000).
# Usage: api_partitions_load.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need openssl

CALLS=${PARTITION_LOAD_CALLS:-500}
CLIENTS_N=10
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
CHECK="$SCENARIO_DIR/partition_pkeys.py"
PORT=$((20000 + ($$ + 13) % 20000))
URL="https://127.0.0.1:$PORT"

api_keys

start_fabricsim "fattree:radix=8,levels=2" # 32 hosts, 12 switches
start_named_ibsmd A host-1 10 "sweep_interval: 0" "api_listen: \"127.0.0.1:$PORT\"" \
	"api_tls_cert: \"$WORK/cert.pem\"" "api_tls_key: \"$WORK/key.pem\"" \
	"api_users_file: \"$WORK/users\""
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
grep -q "serving the partition API on https://127.0.0.1:$PORT" "$WORK/A.log" ||
	fail "no API: $(grep api "$WORK/A.log")"
"$FS" ctl lids | awk '$4 ~ /^host-/ && $4 != "host-1" && $4 != "host-32" { print $1 }' \
	>"$WORK/guids"
[ "$(wc -l <"$WORK/guids")" = 30 ] || fail "not 30 hosts: $(cat "$WORK/guids")"
lft0=$(lft_sets)

# post PATH BODY OUT: curl as api_partitions.sh calls the API; "CODE SECONDS" on stdout
post() {
	curl -s --cacert "$WORK/cert.pem" -u ib-kubernetes:k8s-secret -o "$3" \
		-w '%{http_code} %{time_total}' -X POST \
		-H 'Content-Type: application/json; charset=utf-8' --data-binary "$2" "$URL$1"
}

# one client: CALLS/10 adds and removes of 1-3 random hosts on one of 4 P_Keys, the GUIDs
# as the plugin writes them (16 hex digits, no 0x); each answer's status and time logged
client() {
	local id=$1 n=$2 i pk guids ms ipoib r
	mapfile -t G <"$WORK/guids"
	RANDOM=$((id * 7907))
	g() { printf '"%016x"' "${G[RANDOM % 30]}"; }
	for ((i = 0; i < n; i++)); do
		pk=$(printf '0x0A0%d' $((RANDOM % 4 + 1)))
		guids=$(g)
		((RANDOM % 2)) && guids+=,$(g)
		((RANDOM % 3)) || guids+=,$(g)
		ms=full
		((RANDOM % 4)) || ms=limited
		ipoib=true
		((RANDOM % 3)) || ipoib=false
		if ((RANDOM % 5 < 3)); then
			r=$(post /ufmRest/resources/pkeys "{\"pkey\": \"$pk\", \"index0\": true, \"ip_over_ib\": $ipoib, \"membership\": \"$ms\", \"guids\": [$guids]}" "$WORK/body-$id") ||
				r="curl-failed (exit $?) $r"
			echo "add $r" >>"$WORK/calls-$id"
			[ "${r%% *}" = 200 ] ||
				echo "client $id add $pk $guids: $r $(cat "$WORK/body-$id")" >>"$WORK/errors"
		else
			r=$(post /ufmRest/actions/remove_guids_from_pkey "{\"pkey\": \"$pk\", \"guids\": [$guids]}" "$WORK/body-$id") ||
				r="curl-failed (exit $?) $r"
			echo "remove $r" >>"$WORK/calls-$id"
			[ "${r%% *}" = 200 ] || { [ "${r%% *}" = 404 ] && grep -q "no partition" "$WORK/body-$id"; } ||
				echo "client $id remove $pk $guids: $r $(cat "$WORK/body-$id")" >>"$WORK/errors"
		fi
	done
}

partition_load "$CLIENTS_N" "$CALLS"
ms=$LOAD_MS
cat "$WORK"/calls-* >"$WORK/calls"
n429=$(awk '$2 == 429' "$WORK/calls" | wc -l)
[ "$n429" = 0 ] || fail "$n429 calls answered 429 (password checks rationed): $(grep -i 'password checks' "$WORK/A.log" | head -3)"
[ ! -s "$WORK/errors" ] || fail "calls refused: $(head -5 "$WORK/errors")"
[ "$(wc -l <"$WORK/calls")" = $((CALLS / CLIENTS_N * CLIENTS_N)) ] || fail "calls lost: $(wc -l <"$WORK/calls")"
[ ! -e "$WORK/sa-failed" ] || fail "the SA did not answer: $(head -3 "$WORK/sa-failed")"
nsa=$(wc -l <"$WORK/sa-ok")
[ "$nsa" -gt 0 ] || fail "no SA query ran during the load"
slowest_call=$(awk '{ print $3 }' "$WORK/calls" | sort -n | tail -1)
echo "$CALLS API add/remove calls from $CLIENTS_N clients in $ms ms" \
	"($(awk '$1 == "add"' "$WORK/calls" | wc -l) adds, slowest answer ${slowest_call} s, no 429);" \
	"$nsa SA query pairs answered meanwhile (slowest $(sort -n "$WORK/sa-ok" | tail -1) ms): ok"

# the ports as the API reads its state back (ib-kubernetes's ListGuidsInUse), once the last
# Sets are answered; and that reading is the control socket's
code=$(curl -s --cacert "$WORK/cert.pem" -u ib-kubernetes:k8s-secret -o "$WORK/api.json" \
	-w '%{http_code}' "$URL/ufmRest/resources/pkeys?guids_data=true") || fail "curl GET pkeys"
[ "$code" = 200 ] || fail "GET pkeys: $code $(cat "$WORK/api.json")"
"$IBSA" --control "$WORK/control-A" partition show --json >"$WORK/show.json" || fail "show"
"$CHECK" same "$WORK/api.json" "$WORK/show.json" || fail "the API and partition show differ"
compare() {
	"$FS" ctl pkeys >"$WORK/pkeys"
	"$CHECK" hosts "$WORK/api.json" "$WORK/pkeys"
}
wait_until 10 compare >/dev/null || compare || fail "the ports' P_Key tables differ from the API's state"
compare
for h in $(seq 2 31); do echo "host-$h $("$FS" ctl port "host-$h" 1)"; done >"$WORK/ports"
"$CHECK" facing "$WORK/pkeys" "$WORK/ports" || fail "a switch port facing a host differs from it"
[ "$(lft_sets)" = "$lft0" ] || fail "LFT blocks were written during the partition changes"
echo "every host port and the switch port facing it hold what GET pkeys?guids_data=true and partition show say; no LFT block: ok"

groups_as_asked() { "$CHECK" groups "$WORK/api.json" "$WORK/state-A/sa-state"; }
wait_until 5 groups_as_asked >/dev/null || groups_as_asked || fail "the broadcast groups differ from the partitions"
groups_as_asked
grep -q "event=partition_changed who=https ib-kubernetes@127.0.0.1" "$WORK/A.log" ||
	fail "the changes are not journaled with who asked"
# an audit trail keeps every change: none held back, as the SM's other events may be
changed=$(grep -c "event=partition_changed" "$WORK/A.log" || true)
grep "event=partition_changed" "$WORK/A.log" | grep -q "held back" &&
	fail "partition changes were held back from the journal"
echo "$changed partition_changed events in the journal, none held back"
echo PASS
