#!/usr/bin/env bash
# Congestion control (IBA Annex A10) against OpenSM's manager, from outside, on a fat tree
# whose host-2 has no CC agent (an HCA without it: the kernel answers "unsupported"):
# - OpenSM 3.3 with congestion_control TRUE and a site's cc_* settings (a victim and a credit
#   mask, thresholds, per-SL CA entries, a 70-entry table: two blocks) programs the fabric;
#   `ibsa cc` reads every switch's SwitchCongestionSetting and every HCA port's
#   CACongestionSetting and both table blocks back, and ibccquery (infiniband-diags) reads
#   the same values;
# - on a fresh copy of the fabric, ibsmd with `ibsmd --import-opensm` of the same
#   opensm.conf leaves every port holding exactly what OpenSM's left, and counts host-2 as
#   left alone;
# - only what changed: a full sweep sends no CC Set; a reset switch gets its setting again
#   (one Set); a reload that changes the table sends the table's blocks alone;
# - a tenant with root on host-3: with protect, ibsmd writes its cc_key into every port, and
#   a Set without the key (ibccconfig) on another host's port, or on its own, changes nothing
#   and counts a violation; a Get without the key goes unanswered.
# Usage: sm_congestion.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
need ibccquery
need ibccconfig
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
SPEC="fattree:radix=8,levels=2"

cct=$(python3 -c 'print(",".join("%d:%d" % (i % 4, (i * 37) % 16384) for i in range(70)))')
cat >"$WORK/opensm.conf" <<CONF
congestion_control TRUE
cc_sw_cong_setting_control_map 0x1f
cc_sw_cong_setting_victim_mask 0x0000000000000000000000000000000000000000000000000000000000000016
cc_sw_cong_setting_credit_mask 0x0000000000000000000000000000000000000000000000000000000000000008
cc_sw_cong_setting_threshold 0x0a
cc_sw_cong_setting_packet_size 8
cc_sw_cong_setting_credit_starvation_threshold 0x03
cc_sw_cong_setting_credit_starvation_return_delay 1:5
cc_sw_cong_setting_marking_rate 100
cc_ca_cong_setting_port_control 0x0001
cc_ca_cong_setting_control_map 0x0003
cc_ca_cong_setting_ccti_timer 0 100
cc_ca_cong_setting_ccti_increase 0 1
cc_ca_cong_setting_trigger_threshold 0 5
cc_ca_cong_setting_ccti_min 0 0
cc_ca_cong_setting_ccti_timer 1 500
cc_ca_cong_setting_ccti_increase 1 2
cc_ca_cong_setting_trigger_threshold 1 7
cc_ca_cong_setting_ccti_min 1 1
cc_cct $cct
force_log_flush TRUE
CONF

# readback NAME [KEY]: "NODE ATTR JSON" for every switch (switch) and every HCA port (ca,
# cct blocks 0 and 1) but host-2's, read with ibsa from host-1
readback() {
	local key=${2:-0}
	"$FS" ctl lids | sort -k4 >"$WORK/$1.lids"
	while read -r _ lid _ name; do
		[ "$name" = host-2 ] && continue
		if [[ "$name" == host-* ]]; then
			for a in "ca 0" "cct 0" "cct 1"; do
				set -- $a
				printf '%s %s%s ' "$name" "$1" "$2"
				SIM_HOST=host-1 "$IBSA" --transport sim --json cc "$1" --lid "$lid" --mod "$2" \
					--cc-key "$key" || return 1
			done
		else
			printf '%s switch ' "$name"
			SIM_HOST=host-1 "$IBSA" --transport sim --json cc switch --lid "$lid" --cc-key "$key" ||
				return 1
		fi
	done <"$WORK/$1.lids" >"$WORK/$1.cc"
}
lid_in() { awk -v n="$2" '$4 == n { print $2 }' "$WORK/$1.lids"; }

# ---- OpenSM's manager ----
start_fabricsim "$SPEC"
fabricsim_ctl cc host-2 off >/dev/null || fail "ctl cc"
run_opensm -F "$WORK/opensm.conf"
readback opensm || fail "ibsa cc after OpenSM: $(tail -3 "$WORK/opensm.cc")"
# what OpenSM left is the configuration: a check of the readback, then of ibsmd against it
python3 - "$WORK/opensm.cc" <<'PY' || fail "OpenSM's settings read back (above)"
import json, sys
seen = {}
for l in open(sys.argv[1]):
    node, attr, js = l.split(" ", 2)
    seen[(node, attr)] = json.loads(js)
sw = [v for (n, a), v in seen.items() if a == "switch"]
assert sw and all(v == sw[0] for v in sw), "switches differ"
s = sw[0]
assert s["control_map"] == 0x1f and s["threshold"] == 10 and s["packet_size"] == 8, s
assert s["cs_threshold"] == 3 and s["cs_return_delay"] == (1 << 14 | 5) and s["marking_rate"] == 100, s
ca = [v for (n, a), v in seen.items() if a == "ca0"]
assert ca and all(v == ca[0] for v in ca), "HCA ports differ"
c = ca[0]
assert c["port_control"] == 1 and c["control_map"] == 3, c
assert c["ccti_timer"][:2] == [100, 500] and c["trigger_threshold"][:2] == [5, 7], c
for b in (0, 1):
    t = [v for (n, a), v in seen.items() if a == "cct%d" % b]
    assert t and all(v["ccti_limit"] == 69 for v in t), t[:1]
print("OpenSM: %d switches, %d HCA ports read back" % (len(sw), len(ca)))
PY
# infiniband-diags reads the same: one switch, one host's table
sw_lid=$(lid_in opensm spine-1)
h_lid=$(lid_in opensm host-3)
on_sim host-1 ibccquery SwitchCongestionSetting "$sw_lid" >"$WORK/ibccquery.sw" ||
	fail "ibccquery SwitchCongestionSetting: $(cat "$WORK/ibccquery.sw")"
grep -qE '^Marking_Rate:\.*100$' "$WORK/ibccquery.sw" &&
	grep -qE '^Threshold:\.*0x0a$' "$WORK/ibccquery.sw" &&
	grep -qE '^CS_ReturnDelay:\.*0x4005$' "$WORK/ibccquery.sw" &&
	grep -qE '^Victim_Mask:\.*0+16$' "$WORK/ibccquery.sw" ||
	fail "ibccquery reads another SwitchCongestionSetting: $(cat "$WORK/ibccquery.sw")"
on_sim host-1 ibccquery CongestionControlTable "$h_lid" >"$WORK/ibccquery.cct" ||
	fail "ibccquery CongestionControlTable: $(cat "$WORK/ibccquery.cct")"
grep -qE '^CCTI_Limit:\.*(69|0x45)$' "$WORK/ibccquery.cct" ||
	fail "ibccquery reads another CCTI_Limit: $(head -5 "$WORK/ibccquery.cct")"
stop_sims

# ---- ibsmd on a fresh copy, with the imported configuration ----
"$BUILD/daemon/ibsmd" --import-opensm "$WORK/opensm.conf" >"$WORK/ibsmd.yaml" 2>"$WORK/import.err" ||
	fail "import: $(cat "$WORK/import.err")"
grep -q '^congestion_control:' "$WORK/ibsmd.yaml" || fail "no congestion_control in the import"
cp "$WORK/ibsmd.yaml" "$WORK/imported.yaml"
grep -q 'no counterpart\|programs no congestion' "$WORK/ibsmd.yaml" &&
	fail "cc options left out: $(grep 'no counterpart\|programs no congestion' "$WORK/ibsmd.yaml")"
start_fabricsim "$SPEC"
fabricsim_ctl cc host-2 off >/dev/null || fail "ctl cc"
cc_status() { status_field "s['cc']['$1']"; }
cc_passes_past() { [ "$(cc_status passes)" -gt "$1" ] && [ "$(cc_status programmed)" -ge "$2" ]; }
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
ports=$(("$("$FS" ctl lids | wc -l)" - 1)) # all but host-2
wait_until 30 cc_passes_past 0 "$ports" ||
	fail "ibsmd's congestion control: $(status_field 's.get("cc")')"
[ "$(cc_status unavailable)" = 1 ] || fail "host-2 (no CC agent) is not left alone: $(status_field 's["cc"]')"
readback ibsmd || fail "ibsa cc after ibsmd: $(tail -3 "$WORK/ibsmd.cc")"
diff <(sort "$WORK/opensm.cc") <(sort "$WORK/ibsmd.cc") >"$WORK/cc.diff" ||
	fail "ibsmd's congestion control settings differ from OpenSM's: $(head -5 "$WORK/cc.diff")"
echo "ibsmd: the same settings as OpenSM on $(wc -l <"$WORK/ibsmd.cc") attributes"

# ---- only what changed ----
sets=$(fabricsim_ctl cc-sets)
passes=$(cc_status passes)
"$IBSA" --control "$WORK/control" sweep heavy >/dev/null || fail "sweep"
wait_until 30 cc_passes_past "$passes" "$ports" || fail "no pass after a sweep"
[ "$(fabricsim_ctl cc-sets)" = "$sets" ] ||
	fail "a sweep that changed nothing sent CC Sets: $sets, then $(fabricsim_ctl cc-sets)"
# a switch reset: it lost its setting, and gets it (alone) again
passes=$(cc_status passes)
fabricsim_ctl node remove leaf-2 >/dev/null && fabricsim_ctl node add leaf-2 >/dev/null ||
	fail "ctl node"
"$IBSA" --control "$WORK/control" sweep heavy >/dev/null || fail "sweep"
leaf_holds() {
	SIM_HOST=host-1 "$IBSA" --transport sim --json cc switch --lid "$(lid_of leaf-2)" 2>/dev/null |
		grep -q '"marking_rate": *100'
}
wait_until 30 leaf_holds || fail "the reset leaf-2 did not get its setting again"
wait_until 30 cc_passes_past "$passes" "$ports" || fail "no pass after the reset"
[ "$(fabricsim_ctl cc-sets)" -gt "$sets" ] || fail "no Set after the reset"
# a reload that changes the table: its blocks alone, 2 for each HCA port but host-2's
sets=$(fabricsim_ctl cc-sets)
passes=$(cc_status passes)
cas=$(("$("$FS" ctl lids | grep -c ' host-')" - 1))
sed -i 's/^\(  cct: \[\)"0:0"/\1"3:3"/' "$WORK/ibsmd.yaml"
grep -q '^  cct: \["3:3"' "$WORK/ibsmd.yaml" || fail "the test's edit of cct"
held=$(log_count "congestion control: $ports ports hold")
kill -HUP "$IBSMD_PID"
log_more 30 "congestion control: $ports ports hold" "$held" ||
	fail "no pass sent the new table: $(grep 'congestion' "$WORK/ibsmd.log" | tail -3)"
got=$(($(fabricsim_ctl cc-sets) - sets))
[ "$got" = $((2 * cas)) ] || fail "the new table took $got Sets, not $((2 * cas)) (the table's blocks alone)"
SIM_HOST=host-1 "$IBSA" --transport sim --json cc cct --lid "$(lid_of host-3)" |
	python3 -c 'import json,sys; e = json.load(sys.stdin)["entry"]; sys.exit(e[0] != (3 << 14 | 3))' ||
	fail "host-3's table is not the new one"
stop_pids "$IBSMD_PID"

# ---- a tenant with root on host-3, against protect ----
sed -e 's/^  cc_key: .*/  cc_key: 0x5eedc0de/' -e 's/^  protect: false/  protect: true/' \
	"$WORK/imported.yaml" >"$WORK/ibsmd-protect.yaml"
grep -q '^  protect: true' "$WORK/ibsmd-protect.yaml" || fail "the test's edit of protect"
passes=0
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd-protect.yaml"
wait_until 30 cc_passes_past 0 "$ports" || fail "protect: $(status_field 's.get("cc")')"
# every port holds the key now: the readback needs it, and is still OpenSM's settings
readback protected 0x5eedc0de || fail "ibsa cc with the key: $(tail -3 "$WORK/protected.cc")"
diff <(sort "$WORK/opensm.cc") <(sort "$WORK/protected.cc") >/dev/null ||
	fail "protect changed the settings"
h4=$(lid_of host-4)
h3=$(lid_of host-3)
SIM_HOST=host-1 IBSA_TIMEOUT=300 "$IBSA" --transport sim --retries 0 cc ca --lid "$h4" >/dev/null 2>&1 &&
	fail "a Get without the key was answered"
for target in "$h4" "$h3"; do
	on_sim host-3 timeout 20 ibccconfig -c 0 CACongestionSetting "$target" 0 0xffff 0 0 0 0 \
		>"$WORK/tenant.out" 2>&1 && fail "ibccconfig without the key succeeded: $(cat "$WORK/tenant.out")"
	on_sim host-3 timeout 20 ibccconfig -c 0x1 CongestionKeyInfo "$target" 0 0 0 0 \
		>"$WORK/tenant.out" 2>&1 && fail "a tenant took the CC_Key: $(cat "$WORK/tenant.out")"
done
readback after_tenant 0x5eedc0de || fail "ibsa cc after the tenant"
diff <(sort "$WORK/opensm.cc") <(sort "$WORK/after_tenant.cc") >/dev/null ||
	fail "the tenant changed a port's settings"
SIM_HOST=host-1 "$IBSA" --transport sim --json cc keyinfo --lid "$h4" --cc-key 0x5eedc0de |
	python3 -c 'import json,sys; k = json.load(sys.stdin); sys.exit(not (k["protect"] == 1 and k["violations"] >= 3))' ||
	fail "host-4 counted no violations"
echo "protect: the tenant's Gets and Sets without the key went unanswered and were counted"
