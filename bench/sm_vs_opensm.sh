#!/usr/bin/env bash
# ibsmd against OpenSM 3.3.23 on the same fabricsim fabrics, side by side: bring-up wall time
# (one sweep: discovery, LIDs, routing, programming, all ports ACTIVE) and peak memory, with
# each engine both have (min-hop, up/down, down/up, fat tree), the shift permutations' worst
# link load on each result; ibsmd's routing time from its own phase timing.
# Usage: bench/sm_vs_opensm.sh [BUILD_DIR] [SPEC...]   (a release build: see bench/README.md)
# Default: 2- and 3-level fat trees of 648, 5,184 and 11,664 hosts. Figures, not a test.
set -euo pipefail
BUILD=$(cd "${1:-build-rel}" && pwd)
shift || true
SPECS=("$@")
[ ${#SPECS[@]} -gt 0 ] || SPECS=("fattree:radix=36,levels=2" "fattree:radix=36,levels=3,hosts=5184"
	"fattree:radix=36,levels=3")
FS=$BUILD/test/fabricsim/fabricsim
SHIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=$(mktemp -d /tmp/sm-bench.XXXXXX)
SIM=
trap '[ -n "$SIM" ] && kill $SIM 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
export IBSIM_SOCKNAME="sm-bench-$$"

start() {
	(cd "$WORK" && exec "$FS" "$1" >"$WORK/sim.log" 2>&1) &
	SIM=$!
	for _ in $(seq 1 300); do
		grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && return 0
		sleep 0.1
	done
	return 1
}
stop() { kill $SIM 2>/dev/null || true; wait $SIM 2>/dev/null || true; SIM=; }
# "ok|FAIL WORST": all pairs reached and every port ACTIVE, and the worst link load of the
# shift permutations (checked up to 8,192 hosts, "-" above)
verdict() { "$FS" verify --json | python3 -c 'import json,sys; r=json.load(sys.stdin); u = r["unicast"]["unreachable"]; print("ok" if u == 0 and r["ports"]["active"] == r["ports"]["linked"] and not r["credit_loops"]["loop"] else ("%d-unreached" % u) if u else "FAIL", r["shift"]["worst"] if r["shift"]["checked"] else "-")'; }

opensm_run() { # ENGINE -> "seconds MB verdict"
	local d="$WORK/osm"
	rm -rf "$d" && mkdir -p "$d"
	local engine=$1
	[ "$engine" = updn ] && echo 0x0000000000200000 >"$d/roots"
	(cd "$d" && OSM_TMP_DIR=$d OSM_CACHE_DIR=$d LD_PRELOAD=$SHIM /usr/bin/time -f "%e %M" -o "$d/time" \
		timeout 1800 opensm --once -f "$d/osm.log" -R "$engine" \
		$([ "$engine" = updn ] && echo "-a $d/roots") >/dev/null 2>&1) || true
	if grep -q "SUBNET UP" "$d/osm.log"; then
		awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$d/time"
		echo " $(verdict)"
	else
		echo "fail - - -"
	fi
}

ibsmd_run() { # ENGINE -> "seconds MB verdict route-seconds"
	local d="$WORK/ibsmd"
	rm -rf "$d" && mkdir -p "$d"
	(cd "$d" && /usr/bin/time -f "%e %M" -o "$d/time" timeout 1800 "$BUILD/daemon/ibsmd" \
		--transport sim --once --state-dir "$d/state" --routing-engine "$1" \
		>"$d/out" 2>"$d/log") || true
	if grep -q "^subnet up" "$d/out"; then
		awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$d/time"
		echo " $(verdict) $(sed -n 's/.*routing \([0-9.]*\) s.*/\1/p' "$d/log" | head -1)"
	else
		echo "fail - - - -"
	fi
}

# the engines both have (ENGINES="minhop updn dnup ftree" by default); "worst" is the shift
# permutations' worst link load (1: every one free of congestion); both use VL0 only
printf "%-38s %6s %-6s | %10s %8s %5s | %10s %8s %5s %9s\n" fabric hosts engine "OpenSM s" "MB" \
	worst "ibsmd s" "MB" worst "route s"
for spec in "${SPECS[@]}"; do
	hosts=$("$FS" dump "$spec" | grep -c '^Ca')
	for engine in ${ENGINES:-minhop updn dnup ftree}; do
		start "$spec"
		read -r os_s os_mb os_ok os_worst < <(opensm_run $engine)
		stop
		start "$spec"
		read -r ib_s ib_mb ib_ok ib_worst ib_route < <(ibsmd_run $engine)
		stop
		printf "%-38s %6s %-6s | %10s %8s %5s | %10s %8s %5s %9s   %s/%s\n" "$spec" "$hosts" \
			"$engine" "$os_s" "$os_mb" "$os_worst" "$ib_s" "$ib_mb" "$ib_worst" "$ib_route" \
			"$os_ok" "$ib_ok"
	done
done
