#!/usr/bin/env bash
# A link between switches that comes up carries no routes before both its ports are ACTIVE
# (a route over a port not yet ACTIVE drops every packet sent that way), and a link that
# flaps carries none until it has stayed up for link_settle_time.
# 1. A spine refuses PortInfo Sets, so its end of a returning link never leaves INIT: the
#    routes stay off it (every pair reached) until the spine takes Sets again; then the
#    link is ACTIVE and routes move onto it. Before, the SM moved routes onto it at once.
# 2. A cable pulled and put back once carries routes again as soon as it is ACTIVE; pulled
#    and put back a second time within link_flap_window, it carries none for
#    link_settle_time, then does.
# Usage: sm_link_settle.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=8,levels=2" # 4 spines, 8 leaves, 32 hosts
printf 'link_flap_threshold: 0\nlink_settle_time: 3\n' >"$WORK/ibsmd.yaml"
SIM_HOST=host-32 start_ibsmd --config "$WORK/ibsmd.yaml"
wait_until 10 verify_passes || fail "not up"

routes_on() { "$FS" ctl lft "$1" | awk -v p="$2" '$2 == p' | wc -l; }
unreachable() {
	{ "$FS" verify --json || true; } | python3 -c 'import json,sys; print(json.load(sys.stdin)["unicast"]["unreachable"])'
}

# 1: activated first, routed after
read -r spine sport < <("$FS" ctl port leaf-1 5 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
[ "$(routes_on leaf-1 5)" -gt 0 ] || fail "leaf-1 port 5 carries no route to begin with"
"$FS" ctl refuse "$spine" 0x15 >/dev/null
"$FS" ctl link down leaf-1 5 >/dev/null
wait_until 5 sh -c "[ \$('$FS' ctl lft leaf-1 | awk '\$2 == 5' | wc -l) = 0 ]" || fail "routes not moved off the pulled cable"
refused() { "$FS" ctl refuse "$spine" 0x15 | grep -o '[0-9]*' | tail -1; }
r0=$(refused)
"$FS" ctl link up leaf-1 5 >/dev/null
# the SM sweeps again and again: the spine refuses every PortInfo Set, so its port stays
# INIT; three refused Sets are three tries of the SM to bring the link up
wait_until 10 sh -c "[ \$('$FS' ctl refuse '$spine' 0x15 | grep -o '[0-9]*' | tail -1) -ge $((r0 + 3)) ]" ||
	fail "the SM did not try to bring the link up: $(refused) Sets refused"
"$FS" ctl port "$spine" "$sport" | has "state INIT" || fail "$spine port $sport is not INIT: $("$FS" ctl port "$spine" "$sport")"
u=$(unreachable)
[ "$u" = 0 ] || fail "$u pairs unreachable while the link is INIT: routes moved onto it before it was ACTIVE"
[ "$(routes_on leaf-1 5)" = 0 ] || fail "leaf-1 routes $(routes_on leaf-1 5) LIDs over a link that is not ACTIVE"
echo "a returning link that cannot become ACTIVE: no route over it, every pair reached"
"$FS" ctl refuse "$spine" 0 >/dev/null
wait_until 10 sh -c "'$FS' ctl port '$spine' '$sport' | grep -q 'state ACTIVE'" || fail "not ACTIVE once the spine takes Sets"
wait_until 10 sh -c "[ \$('$FS' ctl lft leaf-1 | awk '\$2 == 5' | wc -l) -gt 0 ]" || fail "no route moved onto the link once ACTIVE"
wait_until 10 verify_passes || fail "not whole: $("$FS" verify | tail -3)"
echo "once ACTIVE, routes move onto it; verify passes"

# 2: damping
"$FS" ctl link down leaf-2 5 >/dev/null
wait_until 5 sh -c "[ \$('$FS' ctl lft leaf-2 | awk '\$2 == 5' | wc -l) = 0 ]" || fail "routes not moved off leaf-2 port 5"
released() { log_count 'ACTIVE and settled: routes move onto them'; }
r0=$(released)
"$FS" ctl link up leaf-2 5 >/dev/null
wait_until 10 sh -c "[ \$('$FS' ctl lft leaf-2 | awk '\$2 == 5' | wc -l) -gt 0 ]" ||
	fail "a cable put back once carries no route"
log_more 10 'ACTIVE and settled: routes move onto them' "$r0" || fail "the link's release is not logged"
# held for no time: on the daemon's clock, from the link seen up to its release, less than
# link_settle_time (3 s)
up_ms=$(log_ms "$WORK/ibsmd.log" 'link up at' last) && rel_ms=$(log_ms "$WORK/ibsmd.log" 'ACTIVE and settled' last) ||
	fail "no link up or release in the log"
held=$(ms_between "$up_ms" "$rel_ms")
[ "$held" -lt 3000 ] || fail "a cable put back once was held $held ms, as if it flapped"
echo "put back once: routed again as soon as ACTIVE ($held ms after the daemon saw it up)"
"$FS" ctl link down leaf-2 5 >/dev/null
wait_until 5 sh -c "[ \$('$FS' ctl lft leaf-2 | awk '\$2 == 5' | wc -l) = 0 ]" || fail "routes not moved off leaf-2 port 5 again"
j0=$("$FS" ctl journal | tail -1 | awk '{ print $1 + 1 }')
lft_sets >"$WORK/before-rejoin"
"$FS" ctl link up leaf-2 5 >/dev/null
wait_until 5 sh -c "'$FS' ctl port leaf-2 5 | grep -q 'state ACTIVE'" || fail "leaf-2 port 5 not ACTIVE again"
# no routes onto it before link_settle_time is judged below on fabricsim's clock (from the
# cable put back to the first LFT Set), not here, at whatever moment the script looks
verify_passes || fail "not whole while the link settles: $("$FS" verify | tail -3)"
wait_until 8 sh -c "[ \$('$FS' ctl lft leaf-2 | awk '\$2 == 5' | wc -l) -gt 0 ]" ||
	fail "the settled link carries no route 8 s after it came back"
# the settle pass's blocks all written: a sweep has ended after it was logged
wait_until 5 awk '/ACTIVE and settled/ { s = NR } /subnet up/ { u = NR } END { exit !(s && u > s) }' "$WORK/ibsmd.log" ||
	fail "no sweep ended after the settle pass"
lft_sets >"$WORK/after-rejoin"
# make-before-break: the link's own ends took their new tables before any switch farther
# out (their last Set came first), which would otherwise send packets their way early
read -r spine2 _ < <("$FS" ctl port leaf-2 5 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
export LC_ALL=C
"$FS" ctl lft-order | sort -k1,1 >"$WORK/order"
join <(sort -k1,1 "$WORK/before-rejoin") <(sort -k1,1 "$WORK/after-rejoin") |
	awk '$3 != $2 { print $1 }' | sort -k1,1 >"$WORK/written"
join "$WORK/written" "$WORK/order" | awk -v a=leaf-2 -v b="$spine2" '
	$1 == a || $1 == b { ends++; if ($2 > emax) emax = $2; next }
	{ others++; if (omin == "" || $2 < omin) omin = $2 }
	END { if (!ends || !others) { print "vacuous"; exit 0 }
	      if (emax > omin) { print "bad " emax " " omin; exit 1 } print "ok " ends " " others }' >"$WORK/wave" ||
	fail "routes moved onto the link in the wrong order: a switch farther out took its table before the link's ends ($(cat "$WORK/wave"); $(cat "$WORK/written" | tr '\n' ' '))"
read -r verdict nends nothers <"$WORK/wave"
[ "$verdict" = ok ] || fail "no LFT Set at the link's ends and beyond while routes moved onto it: $(cat "$WORK/written" | tr '\n' ' ')"
echo "routes moved onto it outwards: its $nends end(s) first, then $nothers switch(es) beyond"
# by fabricsim's clock: from the cable put back to the first LFT block written after it
# (the fabric is otherwise still: that is the move onto the link)
settled=$("$FS" ctl journal "$j0" | awk '$3 == "cable" && $6 == "up" && !up { up = $2 }
	$3 == "lft" && up && !l { l = $2 } END { if (up && l) printf "%.2f", l - up }')
[ -n "$settled" ] || fail "the journal has no cable up and LFT Set after it: $("$FS" ctl journal "$j0" | head -3)"
awk -v s="$settled" 'BEGIN { exit !(s >= 2.99) }' ||
	fail "routed again $settled s after the cable came back, before link_settle_time (3 s)"
grep -q "ACTIVE and settled: routes move onto them" "$WORK/ibsmd.log" || fail "the release is not logged"
verify_passes || fail "not whole after the settle: $("$FS" verify | tail -3)"
echo "put back a second time: routed again $settled s after (link_settle_time 3), by fabricsim's clock"
echo "link settle: ok"
