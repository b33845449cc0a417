#!/usr/bin/env bash
# Pending partition members (issue 49) as ib-kubernetes's UFM plugin meets them: it adds a
# pod's VF GUID to the P_Key before the CNI writes that GUID into the VF. Over HTTPS with
# Basic auth, its exact AddGuidsToPKey is answered 200 for a GUID the fabric does not show;
# the GET (guids_data) reports it pending (lid 65535, logical_state Unknown); it survives a
# failover (kill -9 of the master) and a restart of the new master; then the GUID appears as
# an alias GUID of host-3's port (the host's GUIDInfoRecord Set, `ibsa alias`, the ConnectX-3
# VF path), as the port GUID of a host that joins (fabricsim node add) and as a VF's vport
# GUID (ConnectX-4 and later), and each port's P_Key table (smpquery pkeys; the vport's by
# ibsa smp vpkeys) holds the key within a second of the GUID appearing, judged on
# fabricsim's journal. Removal takes the key away. One client's pending GUIDs are bounded by
# api_max_pending: the one more is refused with the reason, another client is not.
# Usage: api_pending.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need curl
need openssl
need smpquery
need sminfo
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
read -r PORT_A PORT_B < <(free_port_pair)
api_keys
printf 'other pass\n' | "$IBSA" passwd operator >>"$WORK/users" || fail "ibsa passwd"
mapfile -t YAML_A < <(api_yaml "$PORT_A" "api_max_pending: 3")
mapfile -t YAML_B < <(api_yaml "$PORT_B" "api_max_pending: 3")

start_fabricsim "fattree:radix=6,levels=2,vports=8" # every host's port can have VFs
# host-10 is away when the SMs start: its port GUID is one the fabric does not show
G10=$("$FS" ctl lids | awk '$4 == "host-10" { print $1 }')
"$FS" ctl node remove host-10 >/dev/null || fail "node remove host-10"
start_named_ibsmd A host-8 10 "${YAML_A[@]}"
wait_until 60 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
start_named_ibsmd B host-7 5 "${YAML_B[@]}"
sm_a=$(lid_of host-8) sm_b=$(lid_of host-7)
b_standby() { [ "$(sm_state_of "$sm_b")" = 2 ]; }
wait_until 60 b_standby || fail "B is not a standby: state $(sm_state_of "$sm_b")"

call() { # WHO METHOD PATH [BODY] [USER:PASS]
	local port=$PORT_A
	[ "$1" = B ] && port=$PORT_B
	curl -s --cacert "$WORK/cert.pem" -u "${5:-ib-kubernetes:k8s-secret}" -o "$WORK/body" \
		-w '%{http_code}' -X "$2" -H 'Content-Type: application/json; charset=utf-8' \
		${4:+--data-binary "$4"} "https://127.0.0.1:$port$3"
}
expect() { # CODE WHO METHOD PATH [BODY] [USER:PASS]
	local want=$1 got
	shift
	got=$(call "$@") || fail "curl $*"
	[ "$got" = "$want" ] || fail "$1 $2 $3: $got, not $want: $(cat "$WORK/body")"
}
is() { [ "$(call "${@:2}")" = "$1" ]; }
hex() { printf '%016x' "$1"; }
add_body() { # GUID...: AddGuidsToPKey's body as the plugin formats it
	local g list=
	for g in "$@"; do list+="${list:+,}\"$(hex "$g")\""; done
	echo "{\"pkey\": \"0x0A0C\", \"index0\": true, \"ip_over_ib\": true, \"membership\": \"full\", \"guids\": [$list]}"
}
member() { # GUID FIELD VALUE: the GET in $WORK/body says so of that GUID
	python3 - "$WORK/body" "$(hex "$1")" "$2" "$3" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
g = [x for x in p["guids"] if x["guid"] == sys.argv[2]]
assert g, p
assert str(g[0][sys.argv[3]]).lower() == sys.argv[4].lower(), g[0]
PY
}
VF=0x0002c9fffe00c001

# the pod's VF GUID and host-10's port GUID, both not in the fabric: 200, kept pending
expect 200 A POST /ufmRest/resources/pkeys "$(add_body "$VF" "$G10")"
expect 200 A GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
for g in "$VF" "$G10"; do
	member "$g" pending true && member "$g" lid 65535 && member "$g" logical_state Unknown ||
		fail "the GET of a pending GUID $g: $(cat "$WORK/body")"
done
grep -q "partition 0x0a0c: add by https ib-kubernetes@127.0.0.1: 2 GUID(s) added .*2 pending" \
	"$WORK/A.log" || fail "A's log: $(grep 0x0a0c "$WORK/A.log")"
echo "AddGuidsToPKey of a VF GUID and an absent host's GUID: 200, both pending (lid 65535, Unknown): ok"

# the client's limit (3): one more is fine, the fourth is refused; another user is not
expect 200 A POST /ufmRest/resources/pkeys "$(add_body 0x0002c9fffe00c002)"
expect 403 A POST /ufmRest/resources/pkeys "$(add_body 0x0002c9fffe00c003)"
grep -q "https:ib-kubernetes has 3 GUID(s) pending" "$WORK/body" || fail "the refusal: $(cat "$WORK/body")"
expect 200 A POST /ufmRest/resources/pkeys "$(add_body 0x0002c9fffe00c003)" operator:'other pass'
expect 200 A POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0C\", \"guids\": [\"$(hex 0x0002c9fffe00c002)\", \"$(hex 0x0002c9fffe00c003)\"]}"
expect 200 A GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert len(p["guids"]) == 2, p' \
	"$WORK/body" || fail "after removing two pending GUIDs: $(cat "$WORK/body")"
echo "api_max_pending 3: the fourth of one user refused (403, its reason), another user's taken; pending GUIDs removed: ok"

# synced to B; A dies; B, master, still has them pending; B restarted, still
b_has() { grep -q "^pmember 0x0a0c $VF " "$WORK/state-B/partitions-api"; }
wait_until 20 b_has || fail "B did not get the pending member: $(cat "$WORK/state-B/partitions-api" 2>&1)"
kill -9 "$PID_A"
b_master() { [ "$(sm_state_of "$sm_b")" = 3 ]; }
wait_until 30 b_master || fail "B did not take over: state $(sm_state_of "$sm_b")"
wait_until 30 is 200 B GET /ufmRest/app/ufm_version || fail "B's ufm_version: $(cat "$WORK/body")"
stop_pids "$PID_B"
start_named_ibsmd B host-7 5 "${YAML_B[@]}"
wait_until 60 is 200 B GET /ufmRest/app/ufm_version || fail "B did not come back: $(cat "$WORK/body" 2>&1)"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
member "$VF" pending true && member "$G10" pending true ||
	fail "B's GET after the takeover and its restart: $(cat "$WORK/body")"
echo "kill -9 A, B takes over, B restarted: both GUIDs still pending in B's GET: ok"

pkeys_of() { on_sim host-6 smpquery pkeys "$1" 1 2>/dev/null; }
has_key() { pkeys_of "$1" | grep -q 0x8a0c; }
# appear_to_key WHAT NODE PORT: seconds on fabricsim's clock from the journal's first event
# matching WHAT (awk on "KIND NODE PORT ...") after SEQ to NODE PORT's first P_Key Set after it
appear_to_key() {
	"$FS" ctl journal "$SEQ" | awk -v n="$2" -v p="$3" "
		!t0 && ($1) { t0 = \$2 }
		t0 && \$3 == \"pkeys\" && \$4 == n && \$5 == p { printf \"%.3f\", \$2 - t0; exit }"
}
journal_seq() { "$FS" ctl journal | tail -1 | awk '{ print $1 + 1 }'; }

# the VF gets its GUID: host-3's alias at index 1 (the host's own GUIDInfoRecord Set)
l3=$(lid_of host-3)
has_key "$l3" && fail "host-3 holds 0x8a0c before its VF has the GUID: $(pkeys_of "$l3")"
SEQ=$(journal_seq)
SIM_HOST=host-3 "$IBSA" --transport sim alias add "$l3" 1 "$VF" >/dev/null || fail "ibsa alias add"
wait_until 5 has_key "$l3" || fail "host-3 did not get 0x8a0c: $(pkeys_of "$l3")"
took=$(appear_to_key '$3 == "guids" && $4 == "host-3"' host-3 1)
[ -n "$took" ] || fail "the journal lacks the alias or the key: $("$FS" ctl journal "$SEQ")"
awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }' || fail "the key came $took s after the alias"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
member "$VF" pending false && member "$VF" lid "$l3" && member "$VF" port_type virtual &&
	member "$VF" logical_state Active || fail "the GET once the alias is there: $(cat "$WORK/body")"
echo "the VF's GUID appears as host-3's alias: 0x8a0c on host-3's port $took s later (fabricsim's clock), GET: virtual, LID $l3, Active: ok"

# host-10 joins: its port comes up with the key
SEQ=$(journal_seq)
"$FS" ctl node add host-10 >/dev/null || fail "node add host-10"
l10() { lid_of host-10 | grep -qv '^0*$'; }
wait_until 10 l10 || fail "host-10 has no LID"
wait_until 5 has_key "$(lid_of host-10)" || fail "host-10 did not get 0x8a0c: $(pkeys_of "$(lid_of host-10)")"
took=$(appear_to_key '$3 == "node" && $4 == "host-10"' host-10 1)
[ -n "$took" ] || fail "the journal lacks host-10's return or its key: $("$FS" ctl journal "$SEQ")"
awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }' || fail "host-10's key came $took s after it joined"
echo "host-10 joins: 0x8a0c on its port $took s later (fabricsim's clock): ok"

# a pod's GUID that appears as a VF's vport GUID (SR-IOV on ConnectX-4 and later)
VF2=0x0002c9fffe00c011
expect 200 B POST /ufmRest/resources/pkeys "$(add_body "$VF2")"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
member "$VF2" pending true || fail "the vport GUID is not pending: $(cat "$WORK/body")"
SEQ=$(journal_seq)
"$FS" ctl vport add host-4 1 1 "$VF2" >/dev/null || fail "vport add host-4 1 1"
l4=$(lid_of host-4)
vkey() { SIM_HOST=host-6 "$IBSA" --transport sim smp vpkeys --lid "$l4" --mod 65536 2>/dev/null | grep -q 0x8a0c; }
wait_until 5 vkey || fail "host-4's vport 1 did not get 0x8a0c: $("$FS" ctl vports host-4)"
took=$("$FS" ctl journal "$SEQ" | awk '!t0 && $3 == "vport" && $4 == "host-4" && $6 == 1 { t0 = $2 }
	t0 && $3 == "vpkeys" && $4 == "host-4" && $6 == 1 { printf "%.3f", $2 - t0; exit }')
[ -n "$took" ] || fail "the journal lacks the vport or its key: $("$FS" ctl journal "$SEQ")"
awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }' || fail "the vport's key came $took s after it appeared"
expect 200 B GET '/ufmRest/resources/pkeys/0x0a0c?guids_data=true'
member "$VF2" pending false && member "$VF2" lid "$l4" && member "$VF2" port_type virtual ||
	fail "the GET once the vport is there: $(cat "$WORK/body")"
expect 200 B POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0C\", \"guids\": [\"$(hex "$VF2")\"]}"
vlacks() { ! vkey; }
wait_until 5 vlacks || fail "host-4's vport 1 keeps 0x8a0c after the remove"
echo "the pod's GUID appears as host-4's vport 1: 0x8a0c on the vport's table $took s later (fabricsim's clock), read back by SMP; removed: ok"

# removal takes the key away from host-3
expect 200 B POST /ufmRest/actions/remove_guids_from_pkey \
	"{\"pkey\": \"0x0A0C\", \"guids\": [\"$(hex "$VF")\"]}"
lacks() { ! has_key "$1"; }
wait_until 5 lacks "$l3" || fail "host-3 keeps 0x8a0c after the remove: $(pkeys_of "$l3")"
has_key "$(lid_of host-10)" || fail "host-10 lost 0x8a0c with the VF's removal"
echo "RemoveGuidsFromPKey of the VF GUID: host-3 without 0x8a0c, host-10 with it: ok"
echo PASS
