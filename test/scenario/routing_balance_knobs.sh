#!/usr/bin/env bash
# OpenSM's balancing inputs, against OpenSM, from outside:
# - ids_guid_file with updn, on a 5x2 torus rooted at sw-0-0-0: sw-2-0-0 and sw-3-0-0 share a
#   rank, and the higher ID is up. Without the file (IDs are GUIDs) sw-1-0-0 reaches host-4
#   (on sw-3-0-0) through sw-2-0-0; with sw-2-0-0's ID above sw-3-0-0's, that path would climb
#   after descending, and both SMs send it the long way, through the root. ibsmd runs the
#   configuration `--import-opensm` made of OpenSM's opensm.conf;
# - port_prof_ignore_file with minhop, on a fat tree: leaf-1's port to spine-1 is listed, so
#   routes out of it do not count in its load and both SMs send nearly all of leaf-1's
#   remote LIDs that way (a quarter without the file);
# - guid_routing_order_file with minhop and with updn, on the same fat tree: the hosts on port
#   1 of leaves 2 to 5 are listed, so both SMs route them first and leaf-1 sends them by four
#   different uplinks; without the file ibsmd sends them all by one (each leaf's n-th host on
#   the same uplink, which keeps shift permutations free of congestion);
# - scatter_ports and port_shifting carried over and routing a fat tree with every pair
#   reachable (fabricsim verify); two routings with one seed give the same tables.
# Usage: routing_balance_knobs.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need opensm
FS="$BUILD/test/fabricsim/fabricsim"
IBSMD="$BUILD/daemon/ibsmd"
guid_of() { awk -v n="\"$1\"" '/^switchguid=/ { g = substr($1, 12) } /^Switch/ && $3 == n { print g }' "$WORK/fabric.net"; }
# out SWITCH HOST: the port SWITCH forwards HOST's LID by
out() { "$FS" ctl lft "$1" | awk -v l="$(lid_of "$2")" '!/^#/ && $1 == l { print $2 }'; }
import() {
	"$IBSMD" --import-opensm "$WORK/$1.conf" >"$WORK/$1.yaml" 2>"$WORK/$1.err" ||
		fail "import of $1.conf: $(cat "$WORK/$1.err")"
}

# ---- ids_guid_file (updn) ----
SPEC="torus:dims=5x2,hosts=1"
"$FS" dump "$SPEC" >"$WORK/fabric.net"
echo "$(guid_of sw-0-0-0)" >"$WORK/roots"
printf '# sw-2-0-0 up from sw-3-0-0\n%s 100\n%s 0x10\n' "$(guid_of sw-2-0-0)" "$(guid_of sw-3-0-0)" >"$WORK/ids"
printf 'routing_engine updn\nroot_guid_file %s\nforce_log_flush TRUE\n' "$WORK/roots" >"$WORK/plain.conf"
cat "$WORK/plain.conf" - >"$WORK/ids.conf" <<<"ids_guid_file $WORK/ids"
TO_SW2=$(awk '/^Switch/ { in1 = ($3 == "\"sw-1-0-0\"") } in1 && /"sw-2-0-0"/ { sub(/^\[/, ""); sub(/\].*/, ""); print }' "$WORK/fabric.net")
TO_ROOT=$(awk '/^Switch/ { in1 = ($3 == "\"sw-1-0-0\"") } in1 && /"sw-0-0-0"/ { sub(/^\[/, ""); sub(/\].*/, ""); print }' "$WORK/fabric.net")
[ -n "$TO_SW2" ] && [ -n "$TO_ROOT" ] || fail "sw-1-0-0's ports: '$TO_SW2' '$TO_ROOT'"
for conf in plain ids; do
	want=$TO_SW2
	[ "$conf" = ids ] && want=$TO_ROOT
	start_fabricsim "$SPEC"
	run_opensm -F "$WORK/$conf.conf"
	got=$(out sw-1-0-0 host-4)
	[ "$got" = "$want" ] || fail "OpenSM ($conf): sw-1-0-0 sends host-4 by port '$got', want $want"
	stop_sims
	import "$conf"
	[ "$conf" = plain ] || grep -q "^ids_guid_file: \"$WORK/ids\"" "$WORK/ids.yaml" ||
		fail "the import lost ids_guid_file: $(cat "$WORK/ids.yaml")"
	start_fabricsim "$SPEC"
	ibsmd_once --config "$WORK/$conf.yaml" || fail "ibsmd ($conf): $(tail -3 "$WORK/ibsmd.log")"
	got=$(out sw-1-0-0 host-4)
	[ "$got" = "$want" ] || fail "ibsmd ($conf): sw-1-0-0 sends host-4 by port '$got', want $want as OpenSM"
	verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' >/dev/null ||
		fail "fabricsim verify ($conf): $(verify_json 2>&1 | head -5)"
	stop_sims
	echo "updn, $conf: sw-1-0-0 sends host-4 by port $want, as OpenSM; every pair reachable, no credit loop"
done

# ---- port_prof_ignore_file (minhop) ----
SPEC="fattree:radix=8,levels=2"
"$FS" dump "$SPEC" >"$WORK/fabric.net"
P=$(awk '/^Switch/ { in1 = ($3 == "\"leaf-1\"") } in1 && /"spine-1"/ { sub(/^\[/, ""); sub(/\].*/, ""); print }' "$WORK/fabric.net")
[ -n "$P" ] || fail "leaf-1's port to spine-1"
printf '# leaf-1 to spine-1: not balanced\n%s %s\n' "$(guid_of leaf-1)" "$P" >"$WORK/prof-ignore"
printf 'routing_engine minhop\nforce_log_flush TRUE\n' >"$WORK/minhop.conf"
cat "$WORK/minhop.conf" - >"$WORK/prof.conf" <<<"port_prof_ignore_file $WORK/prof-ignore"
# via: how many other leaves' hosts leaf-1 sends out of port P, of how many
via() {
	"$FS" ctl lids | awk '$4 ~ /^host-/ { print $2, $4 }' >"$WORK/hosts"
	"$FS" ctl lft leaf-1 | awk '!/^#/ && NF >= 2 { print $1, $2 }' >"$WORK/leaf1.lft"
	awk -v p="$P" 'NR == FNR { port[$1] = $2; next } port[$1] > 4 { n++; v += port[$1] == p }
		END { print v + 0, n + 0 }' "$WORK/leaf1.lft" "$WORK/hosts"
}
for sm in opensm ibsmd; do
	for conf in minhop prof; do
		start_fabricsim "$SPEC"
		if [ $sm = opensm ]; then
			run_opensm -F "$WORK/$conf.conf"
		else
			import "$conf"
			ibsmd_once --config "$WORK/$conf.yaml" || fail "ibsmd ($conf): $(tail -3 "$WORK/ibsmd.log")"
			verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null || fail "fabricsim verify ($conf)"
		fi
		read -r v n < <(via)
		[ "$n" -ge 24 ] || fail "$sm: only $n remote hosts"
		if [ $conf = prof ]; then
			# the first LIDs may go elsewhere while the listed port ties at 0 with others
			[ "$v" -ge $((n - 3)) ] || fail "$sm with the file: $v of $n remote hosts by port $P"
		else
			[ "$v" -le $((n / 4 + 1)) ] || fail "$sm without the file: $v of $n remote hosts by port $P"
		fi
		echo "$sm minhop, $conf: leaf-1 sends $v of $n remote hosts by port $P"
		stop_sims
	done
done

# ---- guid_routing_order_file (minhop, updn) ----
# the port GUIDs of the hosts on port 1 of leaves 2-5
awk '/^Ca/ { n = $3 } /^\[1\]\(/ && n { g = $1; sub(/^\[1\]\(/, "", g); sub(/\).*/, "", g)
	if ($2 ~ /^"leaf-[2-5]"\[1\]$/) print $2, "0x" g, n; n = "" }' "$WORK/fabric.net" | sort >"$WORK/listed"
[ "$(wc -l <"$WORK/listed")" = 4 ] || fail "the hosts on port 1 of leaves 2-5: $(cat "$WORK/listed")"
awk '{ print $2 }' "$WORK/listed" >"$WORK/order"
# uplinks: the distinct ports leaf-1 sends the listed hosts by
uplinks() {
	local h
	for h in $(awk '{ gsub(/"/, "", $3); print $3 }' "$WORK/listed"); do out leaf-1 "$h"; done | sort -u | wc -l
}
for engine in minhop updn; do
	printf 'routing_engine %s\nforce_log_flush TRUE\n' $engine >"$WORK/$engine-plain.conf"
	cat "$WORK/$engine-plain.conf" - >"$WORK/$engine-order.conf" <<<"guid_routing_order_file $WORK/order"
	start_fabricsim "$SPEC"
	run_opensm -F "$WORK/$engine-order.conf"
	[ "$(uplinks)" = 4 ] || fail "OpenSM $engine with the order: the listed hosts leave leaf-1 by $(uplinks) uplinks"
	stop_sims
	for conf in plain order; do
		import "$engine-$conf"
		start_fabricsim "$SPEC"
		ibsmd_once --config "$WORK/$engine-$conf.yaml" || fail "ibsmd $engine ($conf): $(tail -3 "$WORK/ibsmd.log")"
		verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null || fail "fabricsim verify ($engine $conf)"
		want=4
		[ $conf = plain ] && want=1
		[ "$(uplinks)" = $want ] || fail "ibsmd $engine ($conf): the listed hosts leave leaf-1 by $(uplinks) uplinks, want $want"
		stop_sims
	done
	echo "$engine: the 4 listed hosts leave leaf-1 by 4 uplinks under OpenSM and ibsmd with the order (1 without it): ok"
done

# ---- scatter_ports, port_shifting (minhop) ----
printf 'routing_engine minhop\nscatter_ports 11\nport_shifting TRUE\n' >"$WORK/knobs.conf"
import knobs
grep -q '^scatter_ports: 11$' "$WORK/knobs.yaml" && grep -q '^port_shifting: true$' "$WORK/knobs.yaml" ||
	fail "the import lost scatter_ports or port_shifting: $(cat "$WORK/knobs.yaml")"
for run in 1 2; do
	start_fabricsim "$SPEC"
	ibsmd_once --config "$WORK/knobs.yaml" || fail "ibsmd with scatter_ports: $(tail -3 "$WORK/ibsmd.log")"
	verify_json -- 'r["ok"]' 'r["unicast"]["unreachable"] == 0' >/dev/null || fail "fabricsim verify (scatter_ports)"
	for s in leaf-1 leaf-2 spine-1; do "$FS" ctl lft "$s"; done | grep -v '^#' >"$WORK/scatter-$run.lft"
	stop_sims
done
cmp -s "$WORK/scatter-1.lft" "$WORK/scatter-2.lft" || fail "one seed, two different routings"
echo "scatter_ports 11 and port_shifting imported: every pair reachable, the same tables at each routing: ok"
echo PASS
