# Helpers for scenario tests: start simulators in a private socket namespace and a private
# working directory, and stop them whatever happens.
# Each test gets its own IBSIM_SOCKNAME, so tests can run in parallel and never meet a
# simulator left over from elsewhere.

set -euo pipefail

SCENARIO_NAME=${SCENARIO_NAME:-$(basename "$0" .sh)}
# absolute: helpers run programs from $WORK, and a test may be started by a relative path
SCENARIO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "/tmp/ibsmd-${SCENARIO_NAME}.XXXXXX")
export IBSIM_SOCKNAME="ibsmd-test-$$"
PIDS=()
CLIENTS=()
BUILD=${1:-}

cleanup() {
	local rc=$?
	stop_pids "${PIDS[@]:-}" "${CLIENTS[@]:-}"
	if [ "$rc" -ne 0 ]; then
		echo "--- $SCENARIO_NAME failed (rc $rc); logs in $WORK:" >&2
		for f in "$WORK"/*.log; do
			[ -f "$f" ] || continue
			echo "--- $f" >&2
			tail -n 40 "$f" >&2
		done
	else
		[ -n "${KEEP:-}" ] || rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# `producer | has PATTERN` instead of `producer | grep -q PATTERN`: grep -q leaves at the first
# match, the producer then dies of SIGPIPE and pipefail fails the test now and then (it did in
# CI on a 5,000-line osmtest table). has reads all of its input first.
has() {
	local s
	s=$(cat)
	grep -q "$@" <<<"$s"
}

need() {
	command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed (the README's test command installs it)"
}

# start_ibsim NETFILE: Debian's ibsim, serving on $IBSIM_SOCKNAME, ready when its control
# socket exists.
start_ibsim() {
	need ibsim
	(cd "$WORK" && exec ibsim -s --no-console "$1" >"$WORK/ibsim.log" 2>&1) &
	PIDS+=($!)
	wait_for_socket
}

wait_for_socket() {
	wait_until 10 grep -q "@${IBSIM_SOCKNAME}:ctl" /proc/net/unix && return 0
	fail "simulator did not open @${IBSIM_SOCKNAME}:ctl"
}

UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

# umad2sim BINARY ARGS...: run a libibumad program on the simulator through Debian's preload,
# from $WORK (the preload writes a fake sysfs into the current directory). A sanitized binary
# needs the ASan runtime first in the preload list.
umad2sim() {
	local pre
	pre=$(umad2sim_preload "$1")
	(cd "$WORK" && LD_PRELOAD=$pre \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:suppressions=$SCENARIO_DIR/asan-umad2sim.supp" \
		"$@")
}

# umad2sim_bg PROGRAM ARGS...: the same in the background, UMAD2SIM_PID the program itself
# (a backgrounded umad2sim's $! is a shell that the cleanup kills while the program lives on)
umad2sim_bg() {
	local pre
	pre=$(umad2sim_preload "$1")
	(cd "$WORK" && LD_PRELOAD=$pre \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:suppressions=$SCENARIO_DIR/asan-umad2sim.supp" \
		exec "$@") &
	UMAD2SIM_PID=$!
}

umad2sim_preload() {
	[ -f "$UMAD2SIM" ] || fail "$UMAD2SIM missing (package ibsim-utils)"
	local asan
	asan=$(ldd "$1" 2>/dev/null | awk '/libasan/ { print $3 }')
	echo "${asan:+$asan:}$UMAD2SIM"
}

# The build's umad preload: unchanged libibumad programs (OpenSM, osmtest, saquery, smpquery)
# on fabricsim, with the kernel's RMPP.
PRELOAD="$BUILD/test/fabricsim/libfabricsim-umad.so"

# on_sim HOST PROGRAM ARGS...: run a libibumad program from $WORK, attached to HOST through
# the preload. A diag of infiniband-diags waits IBSMD_TEST_SLOW times its default 1 s for
# each answer (-t), as every other deadline of the tests does.
on_sim() {
	local host=$1 prog=$2
	shift 2
	[ -f "$PRELOAD" ] || fail "$PRELOAD missing"
	case "$prog:$TEST_SLOW" in
	*:1) ;;
	smpquery:* | smpdump:* | saquery:* | perfquery:* | ibroute:* | ibportstate:* | ibnetdiscover:* | sminfo:*)
		set -- -t "$(slow_ms 1)" "$@"
		;;
	esac
	(cd "$WORK" && SIM_HOST=$host LD_PRELOAD=$PRELOAD "$prog" "$@")
}

# on_kernel HOST BINARY ARGS...: one of our own programs on the simulator through the preload
# (the kernel's MAD rules), attached to HOST; a sanitized binary gets the ASan runtime first
# in the preload list. FABRICSIM_UMAD_SMI=1 in the environment gives it an SMI/GSI pair.
# In the background, so that $! is the program itself:
#   (cd "$WORK" && SIM_HOST=H LD_PRELOAD=$(kernel_preload BINARY) exec BINARY ARGS...) &
on_kernel() {
	local host=$1
	shift
	(cd "$WORK" && SIM_HOST=$host LD_PRELOAD=$(kernel_preload "$1") exec "$@")
}

# kernel_preload BINARY: the LD_PRELOAD list for it (the ASan runtime first when sanitized)
kernel_preload() {
	[ -f "$PRELOAD" ] || fail "$PRELOAD missing"
	local asan
	asan=$(ldd "$1" 2>/dev/null | awk '/libasan/ { print $3 }')
	echo "${asan:+$asan:}$PRELOAD"
}

# start_fabricsim NETFILE|SPEC [options]: our simulator on $IBSIM_SOCKNAME.
start_fabricsim() {
	(cd "$WORK" && exec "$BUILD/test/fabricsim/fabricsim" "$@" >"$WORK/fabricsim.log" 2>&1) &
	PIDS+=($!)
	wait_for_socket
}

# stop_pids PID...: TERM, then KILL whatever is still there after 5 s (an OpenSM under
# libumad2sim.so can sit in a blocked read and miss TERM)
stop_pids() {
	local p
	for p in "$@"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
	done
	for _ in $(seq 1 50); do
		local alive=0
		for p in "$@"; do
			[ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "$@"; do
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
	done
	for p in "$@"; do
		[ -n "$p" ] && wait "$p" 2>/dev/null || true
	done
}

stop_sims() {
	stop_pids "${PIDS[@]:-}"
	PIDS=()
}

# run_opensm [opensm options]: one OpenSM sweep (--once) on the simulator through
# libumad2sim.so; fails unless it logs SUBNET UP.
run_opensm() {
	need opensm
	local dir="$WORK/opensm"
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$dir" && OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir LD_PRELOAD=$UMAD2SIM \
		timeout 300 opensm --once -f "$dir/opensm.log" -d 2 --dump_files_dir "$dir" "$@" \
		>"$dir/stdout.log" 2>&1) || true
	grep -q "SUBNET UP" "$dir/opensm.log" || fail "OpenSM did not bring the subnet up ($*)"
}

fabricsim_ctl() {
	"$BUILD/test/fabricsim/fabricsim" ctl "$@"
}

# ibsmd_once [options]: one sweep of our SM on the simulator; its summary in $WORK/ibsmd.out
ibsmd_once() {
	(cd "$WORK" && "$BUILD/daemon/ibsmd" --transport sim --once --state-dir "$WORK/state" "$@" \
		>"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log")
}

# start_ibsmd [options]: our SM as a daemon; waits for its first "subnet up"
start_ibsmd() {
	# a log left by an earlier run (ibsmd_once) must not pass for this one's "subnet up":
	# the daemon's own redirection may empty it only after the wait below first looks
	: >"$WORK/ibsmd.log"
	(cd "$WORK" && exec "$BUILD/daemon/ibsmd" --transport sim --state-dir "$WORK/state" \
		--control-socket "$WORK/control" "$@" \
		>"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log") &
	PIDS+=($!)
	IBSMD_PID=$!
	# IBSMD_UP_TIMEOUT: large fabrics under ASan on a loaded 2-core machine take longer
	wait_until "${IBSMD_UP_TIMEOUT:-60}" grep -q "subnet up" "$WORK/ibsmd.log" ||
		fail "ibsmd did not bring the subnet up"
}

# IBSMD_TEST_SLOW: the one factor every deadline a test waits under is multiplied by (default
# 1; `scripts/dev test --stress` sets 3). A deadline only bounds how long a test waits for the
# event it needs: no test asserts on its own pace, so a slow machine needs a larger factor,
# never a changed test.
TEST_SLOW=${IBSMD_TEST_SLOW:-1}
[[ "$TEST_SLOW" =~ ^[0-9]+([.][0-9]+)?$ ]] || {
	echo "IBSMD_TEST_SLOW=$TEST_SLOW is not a number" >&2
	exit 2
}

# ibsa's per-attempt timeout likewise, unless a test sets its own
export IBSA_TIMEOUT=${IBSA_TIMEOUT:-$(awk -v f="$TEST_SLOW" 'BEGIN { printf "%d", 1000 * f }')}

# slow_ms SECONDS: the deadline in milliseconds, scaled by IBSMD_TEST_SLOW
slow_ms() { awk -v s="$1" -v f="$TEST_SLOW" 'BEGIN { printf "%d", s * f * 1000 }'; }

# slow_s SECONDS: the same in whole seconds, rounded up (for tools that take a timeout)
slow_s() { awk -v s="$1" -v f="$TEST_SLOW" 'BEGIN { t = s * f; printf "%d", t == int(t) ? t : int(t) + 1 }'; }

wait_until() { # SECONDS COMMAND...
	# a deadline in milliseconds: bash's whole-second $SECONDS gave "wait_until 2" as little
	# as 1 s and a bit
	local end=$(($(date +%s%3N) + $(slow_ms "$1")))
	shift
	until "$@" 2>/dev/null; do
		[ "$(date +%s%3N)" -lt $end ] || return 1
		sleep 0.2
	done
}

# verify_json [VERIFY-ARGS...] -- PYTHON-EXPRESSION...: run fabricsim verify --json, assert
# each expression (r is the report) and print the summary
verify_json() {
	local args=()
	while [ "$1" != "--" ]; do
		args+=("$1")
		shift
	done
	shift
	"$BUILD/test/fabricsim/fabricsim" verify --json "${args[@]}" >"$WORK/verify.json" || true
	python3 - "$WORK/verify.json" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for expr in sys.argv[2:]:
    if not eval(expr):
        sys.exit(f"verify: failed {expr}: ports {r['ports']} lids {r['lids']} "
                 f"unicast {r['unicast']} loop {r['credit_loops']} vl_unrun {r['vl_unrun']} "
                 f"issues {r['issues'][:4]}")
u = r["unicast"]
sls = [i for i in range(16) if r["sls_used"] >> i & 1]
vls = [i for i in range(16) if r["vls_used"] >> i & 1]
print(f"  {u['pairs']} pairs reached, hops max {u['hops_max']}, {u['nonminimal']} not minimal, "
      f"SLs {sls} on VLs {vls}, credit loop: {r['credit_loops']['loop']}")
PY
}

# check_verify PYTHON-EXPRESSION...: verify_json with verify's defaults (SL 0)
check_verify() { verify_json -- "$@"; }

# verify_sl [VERIFY-ARGS...] -- PYTHON-EXPRESSION...: verify_json following each path's own SL
# from the SM's dump ($WORK/dump/ibsmd-path-sl.dump)
verify_sl() { verify_json --path-sl "$WORK/dump/ibsmd-path-sl.dump" "$@"; }

# sl_of SLID DLID: the SL that dump gives the path
sl_of() {
	local row
	row=$(awk -v l="$(printf '0x%04x' "$1")" '$1 == "lid" && $2 == l { print $4 }' "$WORK/dump/ibsmd-path-sl.dump")
	awk -v r="$row" -v d="$(($2))" '$1 == "row" && $2 == r { print substr($3, d, 1) }' "$WORK/dump/ibsmd-path-sl.dump"
}

verify_passes() {
	"$BUILD/test/fabricsim/fabricsim" verify >/dev/null 2>&1
}

# start_named_ibsmd NAME HOST PRIORITY [YAML LINE...]: one of several ibsmd daemons on the
# fabric, attached to HOST, with its own configuration ($WORK/NAME.yaml), state directory
# and log ($WORK/NAME.log, appended across restarts); its pid in PID_NAME.
start_named_ibsmd() {
	local name=$1 host=$2 prio=$3 l
	shift 3
	# a later "key: value" line replaces an earlier one (ibsmd refuses a key given twice),
	# so callers can override defaults they pass first
	{
		echo "sm_priority: $prio"
		for l in "$@"; do echo "$l"; done
	} | awk '/^[a-z_]+:/ { k = $1; if (k in at) { line[at[k]] = $0; next } at[k] = n }
		{ line[n++] = $0 } END { for (i = 0; i < n; i++) print line[i] }' >"$WORK/$name.yaml"
	mkdir -p "$WORK/state-$name"
	# IBSMD_TRANSPORT=umad: through libibumad and the preload (the kernel's MAD rules)
	local transport=${IBSMD_TRANSPORT:-sim} pre=
	[ "$transport" = umad ] && pre=$(kernel_preload "$BUILD/daemon/ibsmd")
	(cd "$WORK" && SIM_HOST=$host LD_PRELOAD=$pre exec "$BUILD/daemon/ibsmd" \
		--transport "$transport" --state-dir "$WORK/state-$name" --config "$WORK/$name.yaml" \
		--control-socket "$WORK/control-$name" \
		>"$WORK/$name.out" 2>>"$WORK/$name.log") &
	PIDS+=($!)
	eval "PID_$name=$!"
}

# lid_of NODE: the LID of a node's endpoint (a host's port, a switch's port 0)
lid_of() { "$BUILD/test/fabricsim/fabricsim" ctl lids | awk -v h="$1" '$4 == h { print $2 }'; }

# sm_state_of LID: the SMInfo state (3 MASTER, 2 STANDBY, 1 DISCOVERING) of the SM there, or -
sm_state_of() {
	# bounded as a whole: a diag that hangs in the preload (seen once: a sampler's first
	# sminfo, to an SM not yet attached, never returned) must not stall the test
	timeout "$(slow_s 10)" bash -c 'cd "$1" && SIM_HOST=host-9 LD_PRELOAD="$2" sminfo -t "$3" "$4"' _ \
		"$WORK" "$PRELOAD" "$(slow_ms 1000)" "$1" 2>/dev/null | sed -n 's/.* state \([0-9]\) .*/\1/p' | grep . || echo -
}

lft_sets() { "$BUILD/test/fabricsim/fabricsim" ctl lft-sets | grep -v '^total' | sort; }

# mfts_follow_sa HOST: the end ports each MLID's MFT bits deliver to (fabricsim ctl mcast) are
# the members the SA lists for it (asked from HOST with the SM_Key), no more, no fewer, and no
# MLID has bits without members. The differences go to $WORK/mfts-vs-sa.
mfts_follow_sa() {
	SIM_HOST=$1 "$BUILD/cli/ibsa" --transport sim --sm-key 1 --json mcast >"$WORK/mfts-sa.json" ||
		return 1
	"$BUILD/test/fabricsim/fabricsim" ctl mcast >"$WORK/mfts-fs.txt" || return 1
	python3 - "$WORK/mfts-sa.json" "$WORK/mfts-fs.txt" >"$WORK/mfts-vs-sa" <<'PY'
import ipaddress, json, sys
sa = {}
for r in json.load(open(sys.argv[1])):
    guid = int(ipaddress.IPv6Address(r["port_gid"])) & ((1 << 64) - 1)
    sa.setdefault(int(r["mlid"]), set()).add(guid)
fs = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w:
        fs[int(w[0], 16)] = {int(g, 16) for g in w[1:]}
bad = 0
for m in sorted(set(sa) | set(fs)):
    want, have = sa.get(m, set()), fs.get(m)
    if have is None or m not in sa or want != have:
        bad += 1
        print("MLID 0x%04x: SA members %d, MFTs deliver to %s; only in the SA %s, only in MFTs %s"
              % (m, len(want), "nothing" if have is None else len(have),
                 ["0x%x" % g for g in sorted(want - (have or set()))[:3]],
                 ["0x%x" % g for g in sorted((have or set()) - want)[:3]]))
sys.exit(1 if bad else 0)
PY
}

# api_keys: for the partition API, a self-signed certificate for 127.0.0.1 ($WORK/cert.pem,
# which curl checks as ib-kubernetes does with UFM_CERTIFICATE; its key in $WORK/key.pem) and
# a users file $WORK/users with ib-kubernetes, password k8s-secret; both 0600 as required
# free_port_pair: two free loopback TCP ports, bound together so that they differ ("A B")
free_port_pair() {
	python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

# api_yaml PORT [LINE...]: the configuration of an SM serving the partition API on
# 127.0.0.1:PORT with api_keys's certificate and users file, and LINEs after
api_yaml() {
	local port=$1
	shift
	echo "sweep_interval: 0"
	echo "api_listen: \"127.0.0.1:$port\""
	echo "api_tls_cert: \"$WORK/cert.pem\""
	echo "api_tls_key: \"$WORK/key.pem\""
	echo "api_users_file: \"$WORK/users\""
	[ $# -eq 0 ] || printf '%s\n' "$@"
}

api_keys() {
	need openssl
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null || fail "openssl req"
	chmod 600 "$WORK/key.pem"
	printf 'k8s-secret\n' | "$BUILD/cli/ibsa" passwd ib-kubernetes >"$WORK/users" ||
		fail "ibsa passwd"
	chmod 600 "$WORK/users"
}

# partition_load CLIENTS CALLS: the caller's `client ID COUNT` run CLIENTS times at once (CALLS
# in all) while the SA is asked for the nodes and a path from host-32 over and over: each
# pair's milliseconds in $WORK/sa-ok, failures in $WORK/sa-failed; LOAD_MS the clients' wall
# time. The pids go into the caller's CLIENTS array (its cleanup stops them).
partition_load() {
	local n=$1 calls=$2 c p sa t0 pids=()
	_partition_load_sa &
	sa=$!
	CLIENTS+=("$sa")
	t0=$(date +%s%3N)
	for ((c = 1; c <= n; c++)); do
		client "$c" $((calls / n)) &
		pids+=($!)
	done
	CLIENTS+=("${pids[@]}")
	for p in "${pids[@]}"; do wait "$p"; done
	LOAD_MS=$(($(date +%s%3N) - t0))
	touch "$WORK/load-done"
	wait "$sa" || true
}

_partition_load_sa() {
	local ibsa="$BUILD/cli/ibsa" dst t
	dst=$(lid_of host-1)
	while [ ! -e "$WORK/load-done" ]; do
		t=$(date +%s%3N)
		if "$ibsa" --transport sim --sim-node host-32 --timeout 2000 nodes >/dev/null 2>&1 &&
			"$ibsa" --transport sim --sim-node host-32 --timeout 2000 paths "$(lid_of host-32)" \
				"$dst" >/dev/null 2>&1; then
			echo $(($(date +%s%3N) - t)) >>"$WORK/sa-ok"
		else
			echo "$(date +%T.%N) SA query failed" >>"$WORK/sa-failed"
		fi
	done
}

# log_ms FILE ERE [first|last]: the HH:MM:SS.mmm stamp that opens the first (or last) line of
# FILE matching ERE, in milliseconds since midnight (fails if none). ibsmd and fabricsim stamp
# their lines: a property about time is judged on their clocks, not on the script's pace.
log_ms() {
	local which=${3:-first}
	grep -E "$2" "$1" 2>/dev/null | awk -v w="$which" '
		$1 ~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9][.][0-9][0-9][0-9]$/ {
			split($1, t, /[:.]/); v = ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000 + t[4]
			if (w == "first") { print v; found = 1; exit } last = v; found = 1 }
		END { if (!found) exit 1; if (w == "last") print last }'
}

# ms_between FROM_MS TO_MS: TO - FROM in milliseconds, across midnight
ms_between() { echo $((($2 - $1 + 86400000) % 86400000)); }

# status_num NAME SECTION KEY: a number from the control socket's status of the ibsmd started
# by start_named_ibsmd NAME ("sweeps light", "mads completed", "sync got_delta"): counters
# of the daemon's own events for a test to wait on
status_num() {
	"$BUILD/cli/ibsa" --control "$WORK/control-$1" --json status 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]][sys.argv[2]])' "$2" "$3"
}

# status_ge NAME SECTION KEY MIN: that number has reached MIN (for wait_until)
status_ge() { [ "$(status_num "$1" "$2" "$3")" -ge "$4" ]; }

# status_field EXPR [CONTROL-SOCKET]: a Python expression on the daemon's `ibsa status --json`
# (s), printed
status_field() {
	"$BUILD/cli/ibsa" --control "${2:-$WORK/control}" --json status |
		python3 -c 'import json, sys; s = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# sa_state_written [CONTROL-SOCKET]: wait until the SA's state file holds every change made so
# far (the status says none waits to be written), instead of sleeping past the save delay
sa_state_written() {
	wait_until 10 _sa_state_written "${1:-$WORK/control}" ||
		fail "the SA's state file was not written: $(status_field 's["sa"]' "${1:-$WORK/control}")"
}
_sa_state_written() { [ "$(status_field 's["sa"]["state_unsaved"]' "$1")" = False ]; }

# light_sweeps_pass N [CONTROL-SOCKET]: wait until the SM has ended N more light sweeps: what
# bounds a check that nothing happens (a light sweep would have seen it)
light_sweeps_pass() {
	local ctl=${2:-$WORK/control} from
	from=$(status_field 's["sweeps"]["light"]' "$ctl")
	wait_until $((10 + 3 * $1)) _light_sweeps_past $((from + $1)) "$ctl" ||
		fail "no $1 light sweeps after $from: $(status_field 's["sweeps"]' "$ctl")"
}
_light_sweeps_past() { [ "$(status_field 's["sweeps"]["light"]' "$2")" -ge "$1" ]; }

# log_count PATTERN [LOG]: the lines of ibsmd's log (or LOG) matching PATTERN (grep -E)
log_count() { grep -cE -- "$1" "${2:-$WORK/ibsmd.log}" || true; }

# log_more SECONDS PATTERN COUNT [LOG]: wait until more than COUNT lines match: the daemon logged
# the event anew
log_more() { wait_until "$1" _log_more "$2" "$3" "${4:-$WORK/ibsmd.log}"; }
_log_more() { [ "$(log_count "$1" "$3")" -gt "$2" ]; }

# log_seconds LINE: an ibsmd log line's HH:MM:SS.mmm as seconds of the day, for judging
# a property about time on the daemon's own clock
log_seconds() { awk '{ split($1, t, ":"); printf "%.3f\n", t[1] * 3600 + t[2] * 60 + t[3] }' <<<"$1"; }

# slurm_reads NAME CONF NODES [COMPLAINT]: slurmctld (topology/tree, the hosts NODES, no
# authentication: nothing leaves this host) reads CONF, and complains of it only with
# COMPLAINT when given; scontrol show topology in $WORK/NAME.topo
slurm_reads() {
	local d="$WORK/slurm-$1" port
	mkdir -p "$d/state"
	cp "$2" "$d/topology.conf"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$d/slurm.conf" <<EOF
ClusterName=ibsmd
SlurmctldHost=localhost
SlurmctldPort=$port
AuthType=auth/none
CredType=cred/none
SlurmUser=$(id -un)
StateSaveLocation=$d/state
SlurmctldPidFile=$d/slurmctld.pid
TopologyPlugin=topology/tree
SchedulerType=sched/builtin
SelectType=select/linear
ProctrackType=proctrack/linuxproc
MpiDefault=none
MailProg=/bin/true
NodeName=$3 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES
EOF
	export SLURM_CONF="$d/slurm.conf"
	slurmctld -D -i -v >"$WORK/slurmctld-$1.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	wait_until 30 sh -c "scontrol show topology >'$WORK/$1.topo'" ||
		fail "slurmctld did not answer on $2: $(grep -a -E 'error|fatal' "$WORK/slurmctld-$1.log" | head -5)"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	# (the test's own directory is named after it: out of the way of the pattern)
	local said
	said=$(sed "s|$WORK||g" "$WORK/slurmctld-$1.log" | grep -a -i -E "fatal|error.*(switch|topolog)" || true)
	[ "$said" = "${4:-}" ] || fail "slurmctld on $2: \"$said\", want \"${4:-}\""
}
