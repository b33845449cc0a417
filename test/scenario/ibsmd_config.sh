#!/usr/bin/env bash
# The configuration as an administrator meets it, from outside: the installed example file
# passes --check-config as shipped and with every option uncommented; --dump-config prints
# YAML that --check-config accepts and that dumps back to itself; every option is in the
# example and in ibsmd.yaml(5); each broken file in config/ gets exactly one line on
# standard error, the one its first line expects (file:line:column and what is wrong), and
# exit status 2.
# Usage: ibsmd_config.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSMD="$BUILD/daemon/ibsmd"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLE="$SRC/packaging/ibsmd.yaml"

"$IBSMD" --check-config "$EXAMPLE" >"$WORK/ok.out" || fail "the example file is refused"
grep -qx "$EXAMPLE: configuration OK" "$WORK/ok.out" || fail "check says: $(cat "$WORK/ok.out")"
# every option uncommented (but the secret, a file this test does not have)
sed 's/^#\([a-z_]*:\)/\1/; s/^#  /  /; /^m_key_secret:/d' "$EXAMPLE" >"$WORK/all.yaml"
"$IBSMD" --check-config "$WORK/all.yaml" >/dev/null || fail "the example, uncommented, is refused"
echo "example file passes, as shipped and uncommented: ok"

# --dump-config round trip: defaults, and a file with partitions
for src in "" "$WORK/all.yaml"; do
	"$IBSMD" --dump-config ${src:+--config "$src"} --lmc 1 >"$WORK/d1.yaml" || fail "dump $src"
	"$IBSMD" --check-config "$WORK/d1.yaml" >/dev/null || fail "a dump is refused"
	"$IBSMD" --dump-config --config "$WORK/d1.yaml" >"$WORK/d2.yaml"
	# the first line names the file read; the rest must be equal
	diff <(tail -n +2 "$WORK/d1.yaml") <(tail -n +2 "$WORK/d2.yaml") ||
		fail "a dump does not read back to itself"
	grep -qx "lmc: 1" "$WORK/d1.yaml" || fail "the command line's --lmc is not in the dump"
done
echo "--dump-config reads back to itself, command line included: ok"

# every option documented and shown in the example
grep -v '^#' "$WORK/d1.yaml" | sed -n 's/^\([a-z_0-9]*\):.*/\1/p' >"$WORK/keys"
[ "$(wc -l <"$WORK/keys")" -ge 25 ] || fail "only $(wc -l <"$WORK/keys") options dumped"
while read -r k; do
	grep -q "^#\?$k:" "$EXAMPLE" || fail "option $k is not in the example file"
	grep -q "^\.BR $k \|^\.BR $k\" \|^\.BR $k \"\|, \" $k " "$SRC/man/ibsmd.yaml.5" ||
		grep -q "^\.BR [a-z_]* \", \" $k" "$SRC/man/ibsmd.yaml.5" ||
		fail "option $k is not described in ibsmd.yaml(5)"
done <"$WORK/keys"
echo "$(wc -l <"$WORK/keys") options, each in the example and in ibsmd.yaml(5): ok"

n=0
for f in "$SRC"/test/scenario/config/bad-*.yaml; do
	expect=$(sed -n '1s/^# expect: //p' "$f")
	[ -n "$expect" ] || fail "$f has no '# expect:' line"
	rc=0
	"$IBSMD" --check-config "$f" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
	[ "$rc" = 2 ] || fail "$(basename "$f"): exit status $rc, not 2"
	[ ! -s "$WORK/bad.out" ] || fail "$(basename "$f"): something on standard output"
	[ "$(wc -l <"$WORK/bad.err")" = 1 ] ||
		fail "$(basename "$f"): not one line: $(cat "$WORK/bad.err")"
	got=$(cat "$WORK/bad.err")
	[ "$got" = "ibsmd: $f$expect" ] || fail "$(basename "$f"): got '$got', expected '$expect'"
	# the daemon itself refuses to start with it, with the same line
	rc=0
	sd=(--state-dir "$WORK/st") # (the command line would win over the file's state_dir)
	! grep -q '^state_dir:' "$f" || sd=()
	"$IBSMD" --transport sim --config "$f" "${sd[@]}" >/dev/null 2>"$WORK/run.err" || rc=$?
	[ "$rc" = 2 ] && [ "$(cat "$WORK/run.err")" = "$got" ] ||
		fail "$(basename "$f"): the daemon says '$(cat "$WORK/run.err")' (rc $rc)"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n broken files"
echo "$n broken files, each refused with one precise line and status 2: ok"
# libyaml's scanner is quadratic in the nesting: a 200 KB file of brackets took 74 s
python3 -c "print('partitions: ' + '[' * 100000 + ']' * 100000)" >"$WORK/deep.yaml"
# (refused at the 33rd bracket, before the scanner's cost grows: the timeout only catches
# a parse of the whole file)
rc=0
timeout 60 "$IBSMD" --check-config "$WORK/deep.yaml" 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -qx "ibsmd: $WORK/deep.yaml:1:44: nested more than 32 levels deep: no option needs that" "$WORK/bad.err" ||
	fail "deep nesting: rc $rc: $(cat "$WORK/bad.err")"
# and a file far larger than any configuration is refused before it is read
truncate -s 20M "$WORK/huge.yaml"
rc=0
"$IBSMD" --check-config "$WORK/huge.yaml" 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -q "larger than any configuration needs" "$WORK/bad.err" ||
	fail "a 20 MB file: rc $rc: $(cat "$WORK/bad.err")"
echo "deep nesting refused at its 33rd level, a 20 MB file unread: ok"
# a file that is a pipe (--config <(...)) is read once and whole: what it says is applied,
# and its mistakes are found (the pre-scan once read the pipe dry before the parser)
"$IBSMD" --dump-config --config <(printf 'lid_max: 300\nsweep_interval: 7\n') >"$WORK/pipe.yaml" ||
	fail "--dump-config from a pipe"
grep -qx 'lid_max: 0x012c' "$WORK/pipe.yaml" && grep -qx 'sweep_interval: 7' "$WORK/pipe.yaml" ||
	fail "a pipe's options were not applied: $(grep -E '^(lid_max|sweep_interval):' "$WORK/pipe.yaml")"
rc=0
"$IBSMD" --check-config <(printf 'lid_max: 300\nlid_max: 400\n') 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -q "lid_max is given twice" "$WORK/bad.err" || fail "a pipe's mistake: rc $rc: $(cat "$WORK/bad.err")"
echo "a configuration from a pipe: applied, and checked: ok"
# a missing file
rc=0
"$IBSMD" --check-config "$WORK/none.yaml" 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -qx "ibsmd: $WORK/none.yaml: No such file or directory" "$WORK/bad.err" ||
	fail "missing file: $(cat "$WORK/bad.err")"
echo "a missing file: ok"

# the importer: OpenSM's files as YAML that --check-config takes, and what it cannot
# translate refused with file:line
printf 'lmc 1\nsm_priority 7\nrouting_engine ftree,lash,torus-2QoS\nlog_file /var/log/opensm.log\nqos TRUE\nnue_max_num_vls 4\nvirt_enabled 1\nvirt_max_ports_in_process 16\n' \
	>"$WORK/opensm.conf"
# QoS: the per class tables (qos_*), and the policy file opensm.conf names
POLICY="$(cd "$(dirname "$0")" && pwd)/opensm/qos-policy.conf"
printf 'qos_policy_file %s\nqos_high_limit 4\nqos_vlarb_high 0:4,1:0\nqos_vlarb_low 0:64, 1:64, 2:64, 3:64\nqos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7\nqos_ca_sl2vl 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3\nqos_max_vls 8\n' \
	"$POLICY" >>"$WORK/opensm.conf"
printf 'Default=0x7fff, ipoib : ALL, SELF=full ;\nio=0x10, defmember=full : ALL_CAS ;\ncompute=0x8001 : ALL_CAS ;\n' \
	>"$WORK/partitions.conf"
"$IBSMD" --import-opensm "$WORK/opensm.conf" --partitions "$WORK/partitions.conf" \
	>"$WORK/imported.yaml" || fail "import"
"$IBSMD" --check-config "$WORK/imported.yaml" >/dev/null || fail "the imported YAML is refused"
grep -q '^# opensm log_file /var/log/opensm.log: ' "$WORK/imported.yaml" &&
	grep -q '^# opensm routing_engine torus-2QoS: ' "$WORK/imported.yaml" &&
	grep -q '^routing_engine: "ftree,lash,torus,minhop"' "$WORK/imported.yaml" &&
	grep -q '^routing_max_vls: 4$' "$WORK/imported.yaml" &&
	grep -q '^virtualization: disable$' "$WORK/imported.yaml" &&
	grep -q '^virt_max_ports_in_process: 16$' "$WORK/imported.yaml" ||
	fail "the import does not say what it did with OpenSM's options: $(cat "$WORK/imported.yaml")"
# the policy as ibsmd reads it back (--dump-config): every group, level, rule and table
"$IBSMD" --config "$WORK/imported.yaml" --dump-config 2>&1 | sed -n '/^qos:/,/^[a-z]/p' | sed '$d' \
	>"$WORK/qos-dump.yaml" || fail "--dump-config of the imported QoS"
diff -u "$(dirname "$POLICY")/qos-policy.expected.yaml" "$WORK/qos-dump.yaml" >"$WORK/qos.diff" ||
	fail "the imported QoS policy differs from the expected one: $(head -30 "$WORK/qos.diff")"
echo "--import-opensm with qos TRUE: qos-policy.conf's groups, levels, rules and qos-ulps, the qos_* tables per class: ok"
imp_bad() { # EXPECTED-SUFFIX FILE-CONTENT...
	local want=$1 rc=0
	shift
	printf '%b' "$@" >"$WORK/bad.conf"
	"$IBSMD" --import-opensm --partitions "$WORK/bad.conf" >/dev/null 2>"$WORK/imp.err" || rc=$?
	[ "$rc" = 2 ] && [ "$(cat "$WORK/imp.err")" = "ibsmd: $WORK/bad.conf$want" ] ||
		fail "import of $(head -c 60 "$WORK/bad.conf"): rc $rc, '$(cat "$WORK/imp.err")', want '$want'"
}
imp_bad ':2: partition "noid" has no P_Key: OpenSM makes one up, ibsmd needs it written (Name=0xPKEY)' \
	'Default=0x7fff : ALL ;\nnoid : ALL ;\n'
imp_bad ':1: "0xnothex" is not a port GUID' 'a=0x10 : 0xnothex ;\n'
imp_bad ':2: a partition definition without its closing '"';'"'' '# x\na=0x10 : ALL\n'
imp_bad ':1: rate=26: an IBA rate code 2-25 (3 is 10 Gb/s, 16 is 100 Gb/s)' \
	'a=0x10, ipoib, rate=26 : ALL ;\n'
qos_bad() { # EXPECTED-SUFFIX FILE-CONTENT...: a QoS policy refused with file:line
	local want=$1 rc=0
	shift
	printf '%b' "$@" >"$WORK/bad-qos.conf"
	"$IBSMD" --import-opensm --qos-policy "$WORK/bad-qos.conf" >/dev/null 2>"$WORK/imp.err" || rc=$?
	[ "$rc" = 2 ] && [ "$(cat "$WORK/imp.err")" = "ibsmd: $WORK/bad-qos.conf$want" ] ||
		fail "QoS policy $(head -c 60 "$WORK/bad-qos.conf"): rc $rc, '$(cat "$WORK/imp.err")', want '$want'"
}
qos_bad ":3: qos-setup's per-port scopes (sl2vl-scope) cannot be translated: ibsmd's tables are per port class (qos_ca_*, qos_swe_*, qos_sw0_*, qos_rtr_* in opensm.conf; vl_tables in ibsmd.yaml)" \
	'qos-setup\nsl2vl-tables\nsl2vl-scope\n'
qos_bad ":4: node-type cannot be translated: ibsmd's port groups have no node-type" \
	'port-groups\nport-group\nname: a\nnode-type: CA\nend-port-group\nend-port-groups\n'
qos_bad ':4: qos-level-name: no qos-level "none" defined before' \
	'qos-match-rules\nqos-match-rule\nqos-level-name: none\nend-qos-match-rule\nend-qos-match-rules\n'
qos_bad ':2: qos-ulps: "vnic" cannot be translated (ibsmd takes default; any with service-id, pkey or target-port-guid; sdp, rds, iser with or without port-num; ipoib with or without pkey; srp with target-port-guid)' \
	'qos-ulps\nvnic : 3\nend-qos-ulps\n'
qos_bad ':2: the file ends inside a block' 'qos-levels\nqos-level\n'
echo "--import-opensm --qos-policy: 5 refusals with file:line: ok"
echo "--import-opensm: YAML --check-config takes, comments for what has no counterpart, 5 refusals with file:line: ok"
