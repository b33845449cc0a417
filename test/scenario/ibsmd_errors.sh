#!/usr/bin/env bash
# Bad input never crashes ibsmd and says what is wrong: configuration mistakes name file and
# line, bad options and a missing simulator name the problem, with distinct exit codes.
# Usage: ibsmd_errors.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

IBSMD="$BUILD/daemon/ibsmd"
expect() { # EXIT-CODE PATTERN -- COMMAND...
	local want=$1 pat=$2
	shift 3
	set +e
	"$@" >"$WORK/out" 2>&1
	local rc=$?
	set -e
	[ "$rc" = "$want" ] || fail "exit $rc (want $want) from: $* : $(cat "$WORK/out")"
	grep -q -- "$pat" "$WORK/out" || fail "no \"$pat\" in: $(cat "$WORK/out")"
}

cfg() { printf '%b' "$1" >"$WORK/c.yaml"; echo "$WORK/c.yaml"; }
expect 2 "c.yaml:2:1: unknown option \"routing_engin\"" -- "$IBSMD" --config "$(cfg 'lmc: 1\nrouting_engin: updn\n')"
expect 2 "c.yaml:1:6: lmc: 9 is above the most allowed, 7" -- "$IBSMD" --config "$(cfg 'lmc: 9\n')"
expect 2 "c.yaml:2:" -- "$IBSMD" --config "$(cfg 'lmc: 1\n  bad: [\n')"
expect 2 "c.yaml:1:13: partitions: expected a list" -- "$IBSMD" --config "$(cfg 'partitions: 5\n')"
expect 2 "no pkey" -- "$IBSMD" --config "$(cfg 'partitions:\n  - name: a\n    members: all\n')"
expect 2 "share P_Key 0x0001" -- "$IBSMD" --config "$(cfg 'partitions:\n  - {name: a, pkey: 1, members: all}\n  - {name: b, pkey: 0x8001, members: all}\n')"
expect 2 "LID range 100-50" -- "$IBSMD" --config "$(cfg 'lid_min: 100\nlid_max: 50\n')"
expect 2 "No such file" -- "$IBSMD" --config "$WORK/none.yaml"
expect 2 "unknown routing engine \"fattree\"" -- "$IBSMD" --routing-engine updn,fattree
expect 2 "takes 0 to 7" -- "$IBSMD" --lmc 9
expect 2 "unknown log level" -- "$IBSMD" --log-level loud
expect 2 "unknown transport" -- "$IBSMD" --transport carrier-pigeon
expect 3 "no simulator listening" -- "$IBSMD" --transport sim --once
echo "configuration and option errors: ok"

# a valid configuration with every option is accepted and used
cat >"$WORK/full.yaml" <<'YAML'
# every option ibsmd reads, as a fabric administrator would write them
routing_engine: updn,minhop
root_guids: [0x200000]
lmc: 1
lmc_esp0: false
lid_min: 1
lid_max: 0xbfff
sweep_interval: 5
mad_window: 32
mad_window_per_node: 2
mad_timeout_ms: 300
mad_retries: 4
subnet_prefix: 0xfe80000000000000
m_key: 0
m_key_lease: 60
m_key_protect: 0
sm_priority: 5
subnet_timeout: 18
log_level: info
partitions:
  - name: storage
    pkey: 0x8001
    membership: full
    members: all
  - name: compute
    pkey: 0x0002
    membership: limited
    members: [0x100001, 0x100003]
YAML
start_fabricsim "fattree:radix=8,levels=2"
ibsmd_once --config "$WORK/full.yaml" || fail "full config: $(cat "$WORK/ibsmd.out")"
grep -q "routed by updn" "$WORK/ibsmd.log" || fail "the configured engine was not used"
check_verify 'r["ok"]'
# the configured partitions are in the CA's P_Key table
out=$("$BUILD/cli/ibsa" --transport sim --sim-node host-1 smp pkeys --dr 0)
echo "$out" | has "0xffff,0x8001,0x0002" || fail "P_Keys of host-1: $out"
out=$("$BUILD/cli/ibsa" --transport sim --sim-node host-3 smp pkeys --dr 0)
echo "$out" | has "0xffff,0x8001,0x0000" || fail "P_Keys of host-3 (not in compute): $out"
echo "full configuration: ok"
