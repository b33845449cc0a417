#!/usr/bin/env bash
# ibsmd --dry-run, the read-only trial a site runs beside its SM: through --transport umad
# under the kernel's MAD rules, on a host of a fabric that OpenSM runs, then one that an
# ibsmd runs. It must send no Set (fabricsim counts the SubnSets each node's programs send)
# and never open the issm device, and its report must agree with fabricsim verify on the
# running SM's tables: on random30 (a fabric where shortest paths close credit loops)
# OpenSM's minhop has a credit loop, verify says so, the dry run says so, and nue's routes
# in the same report have none.
# Usage: ibsmd_dry_run.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need opensm
FS="$BUILD/test/fabricsim/fabricsim"
IBSMD="$BUILD/daemon/ibsmd"
osm() { # NAME HOST [opensm options]: OpenSM as the running SM, in a directory of its own
	local name=$1 host=$2
	shift 2
	mkdir -p "$WORK/$name"
	(cd "$WORK/$name" && OSM_TMP_DIR="$WORK/$name" OSM_CACHE_DIR="$WORK/$name" SIM_HOST=$host \
		LD_PRELOAD=$PRELOAD exec opensm -f "$WORK/$name/opensm.log" -d 2 -s 0 "$@" \
		>"$WORK/$name.stdout" 2>&1) &
	PIDS+=($!)
	wait_until 60 grep -q "SUBNET UP" "$WORK/$name/opensm.log" || fail "OpenSM did not bring the subnet up"
}
dry() { # NAME HOST [ibsmd options]: the dry run, its report in NAME.txt
	local name=$1 host=$2
	shift 2
	FABRICSIM_UMAD_DEBUG=1 on_kernel "$host" "$IBSMD" --transport umad --dry-run \
		--state-dir "$WORK/state-$name" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.log"
}
field() { # NAME LABEL COLUMN: a number from the report's table (2: running SM, 3: ibsmd)
	sed -n "s/^  $2  *//p" "$WORK/$1.txt" | awk -v c="$3" '{ print $(c - 1) }'
}
no_sets_from() { # NAME HOST
	[ "$("$FS" ctl sets "$2")" = 0 ] || fail "$1: the dry run sent $("$FS" ctl sets "$2") Sets"
	grep -q "0 Sets sent" "$WORK/$1.txt" || fail "$1: $(head -1 "$WORK/$1.txt")"
	grep -q "issm" "$WORK/$1.log" && fail "$1: the dry run opened the issm device"
	[ -z "$(ls -A "$WORK/state-$1" 2>/dev/null)" ] || fail "$1: the dry run saved $(ls "$WORK/state-$1")"
	return 0
}

# 1. beside OpenSM on the 648-host tree
start_fabricsim "fattree:radix=36,levels=2" --max-clients 32
osm osm-tree host-1
sets0=$("$FS" ctl sets host-1)
dry tree host-5 || fail "the dry run beside OpenSM: $(tail -5 "$WORK/tree.txt" "$WORK/tree.log")"
no_sets_from tree host-5
grep -q "^verdict: ibsmd's routes reach every pair" "$WORK/tree.txt" || fail "$(tail -4 "$WORK/tree.txt")"
[ "$(field tree "unreachable pairs" 2)" = 0 ] || fail "OpenSM's routes unreachable: $(field tree "unreachable pairs" 2)"
[ "$(field tree pairs 2)" -gt 400000 ] || fail "pairs: $(field tree pairs 2)"
verify_passes || fail "the running SM's subnet broke during the dry run: $("$FS" verify | tail -2)"
echo "beside OpenSM (648 hosts): 0 Sets, $(sed -n 's/^tables: //p' "$WORK/tree.txt"); OpenSM $("$FS" ctl sets host-1) Sets (was $sets0)"
stop_sims

# 2. random30: OpenSM's minhop closes a credit loop; verify and the dry run agree
start_fabricsim "$(cd "$(dirname "$0")" && pwd)/fabrics/random30-updn-loop.net" --max-clients 32
osm osm-random h0001
"$FS" verify --json >"$WORK/verify.json" || true
osm_loop=$(python3 -c 'import json, sys; print(str(json.load(open(sys.argv[1]))["credit_loops"]["loop"]).lower())' "$WORK/verify.json")
dry random h0002 --routing-engine nue || true
no_sets_from random h0002
[ -s "$WORK/random.txt" ] || fail "no report on random30: $(tail -3 "$WORK/random.log")"
theirs=$(awk '/^  credit loops/ { print $3 }' "$WORK/random.txt")
ours=$(awk '/^  credit loops/ { print $(NF - 2) }' "$WORK/random.txt")
case "$osm_loop/$theirs" in
true/none | false/[0-9]*) fail "verify says credit loop $osm_loop for OpenSM's tables, the dry run: $(grep '^  credit' "$WORK/random.txt")" ;;
esac
[ "$ours" = none ] || fail "nue's routes have a credit loop: $(grep '^  credit' "$WORK/random.txt")"
[ "$(field random "unreachable pairs" 3)" = 0 ] || fail "nue's routes leave pairs unreachable"
echo "random30: OpenSM's credit loop $osm_loop by verify, the dry run agrees; nue's routes none; 0 Sets"
stop_sims

# 3. beside an ibsmd master (updn), the dry run with minhop
start_fabricsim "fattree:radix=8,levels=3" --max-clients 32
start_named_ibsmd M host-1 5 "sweep_interval: 0" "routing_engine: updn"
wait_until 60 grep -q "subnet up" "$WORK/M.log" || fail "the ibsmd master did not bring the subnet up"
dry ibsmd host-9 --routing-engine minhop || fail "the dry run beside ibsmd: $(tail -4 "$WORK/ibsmd.txt")"
no_sets_from ibsmd host-9
grep -q "^verdict: ibsmd's routes reach every pair" "$WORK/ibsmd.txt" || fail "$(tail -4 "$WORK/ibsmd.txt")"
grep -q "standing by\|handed over" "$WORK/M.log" && fail "the master stepped aside for the dry run"
echo "beside an ibsmd master: 0 Sets, $(sed -n 's/^tables: //p' "$WORK/ibsmd.txt")"
echo PASS
