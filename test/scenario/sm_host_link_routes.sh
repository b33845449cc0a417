#!/usr/bin/env bash
# A host's link going down changes no route between switches (its LID stays routed where it
# was, unreachable with it): the SM keeps every route without running its engine, writes no
# LFT block, and the rest of the fabric stays reachable. What does change routes still runs
# the engine: the host coming back, a link between switches going, a switch lost.
# Usage: sm_host_link_routes.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
FS="$BUILD/test/fabricsim/fabricsim"

start_fabricsim "fattree:radix=8,levels=2"
start_ibsmd --config <(printf 'log_level: info\nsweep_interval: 0\n')
HOLDS="only hosts left: every route holds"
ups() { log_count "subnet up"; }
blocks() { "$FS" ctl lft-sets | awk '$1 == "total" { print $2 }'; }
# change CTL...: the fabricsim command, then the SM's next "subnet up"
change() {
	local n
	n=$(ups)
	"$FS" ctl "$@" >/dev/null || fail "fabricsim ctl $*"
	log_more 30 "subnet up" "$n" || fail "no sweep after \"$*\""
}
# the unreachable pairs are all at a link that is down, N of them
reach_ok() {
	verify_json -- "r[\"unicast\"][\"unreachable\"] == r[\"unicast\"][\"unreachable_link_down\"]" \
		'not r["credit_loops"]["loop"]' >/dev/null
}

b0=$(blocks)
change link down host-5 1
[ "$(log_count "$HOLDS")" = 1 ] || fail "a host's link down ran the routing engine: $(grep -E 'routing|subnet up' "$WORK/ibsmd.log" | tail -3)"
[ "$(blocks)" = "$b0" ] || fail "a host's link down wrote $(($(blocks) - b0)) LFT blocks"
reach_ok || fail "after host-5's link went down: $(tail -3 "$WORK/ibsmd.log")"
echo "host link down: every route kept without the engine, no LFT block written, the rest reachable: ok"

change link up host-5 1
[ "$(log_count "$HOLDS")" = 1 ] || fail "the host's return did not run the routing engine"
wait_until 30 verify_passes || fail "host-5 back: $("$FS" verify 2>&1 | tail -3)"
echo "the host back: routed by the engine, every pair reached: ok"

# a link between switches: routes move off it
isl=$("$FS" ctl port leaf-1 5 | sed -n 's/.* peer "\([^"]*\)" .*/\1/p')
[[ $isl == spine* ]] || fail "leaf-1 port 5 faces \"$isl\", not a spine (the fabric changed?)"
change link down leaf-1 5
[ "$(log_count "$HOLDS")" = 1 ] || fail "a link between switches kept the routes"
reach_ok || fail "after leaf-1 port 5 went down: $("$FS" verify 2>&1 | tail -3)"
change link up leaf-1 5
wait_until 30 verify_passes || fail "leaf-1 port 5 back: $("$FS" verify 2>&1 | tail -3)"
echo "a link between switches down and up: routed by the engine each time, every pair reached: ok"

# a switch lost: routes move off it
change node remove spine-2
[ "$(log_count "$HOLDS")" = 1 ] || fail "a spine lost kept the routes"
wait_until 30 verify_passes || fail "spine-2 gone: $("$FS" verify 2>&1 | tail -3)"
echo "a spine lost: routed by the engine, every pair reached: ok"
