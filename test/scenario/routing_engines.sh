#!/usr/bin/env bash
# The routing engines on the topologies they are for, checked from outside by fabricsim verify
# (every pair reached, no credit loop, the shift permutations' worst link load) and by
# OpenSM's ibdmchk on ibsmd's dump files:
# - ftree on a complete 3-level fat tree: every shift permutation congestion-free (minhop
#   puts 6 flows of one on a link there); on a quasi fat tree (links and switches missing) it
#   still routes by itself, free of credit loops; roots from root_guid_file;
# - dnup on a 2-level tree; on an irregular graph it fails naming the switches it cannot
#   join, and the chain moves on;
# - file: the tables ibsmd dumped, one entry edited by hand, are what the switch holds
#   (ibroute); a file pointing a LID at a port without a link is refused with the file, the
#   switch and the port named, and minhop routes instead.
# Usage: routing_engines.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need ibdmchk
need ibroute
FS="$BUILD/test/fabricsim/fabricsim"

# once ENGINE [YAML LINE...]: one sweep with that engine (and configuration), dump files in
# $WORK/dump
once() {
	local engine=$1 l
	shift
	{
		echo "routing_engine: \"$engine\""
		echo "dump_dir: $WORK/dump"
		echo "dump_after_sweep: true"
		for l in "$@"; do echo "$l"; done
	} >"$WORK/once.yaml"
	rm -rf "$WORK/dump"
	ibsmd_once --config "$WORK/once.yaml" || fail "ibsmd --once with $engine: $(tail -3 "$WORK/ibsmd.log")"
}

routed_by() { # ENGINE: the summary names it
	grep -q "routed by $1" "$WORK/ibsmd.log" || fail "not routed by $1: $(grep -E 'routing|routed' "$WORK/ibsmd.log" | tail -3)"
}

ibdmchk_clean() { # ibdmchk on the dump: all nodes read, no credit loop
	local d="$WORK/dump"
	(cd "$d" && timeout 300 ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs \
		>"$d/ibdmchk.out" 2>&1) 2>/dev/null || true # ibdmchk crashes on exit (ibutils bug)
	grep -q "Analyzing Fabric for Credit Loops" "$d/ibdmchk.out" ||
		fail "ibdmchk read nothing: $(grep -- '-E-' "$d/ibdmchk.out" | head -3)"
	! grep -q "credit loops in routing" "$d/ibdmchk.out" || fail "ibdmchk finds a credit loop"
	echo "  ibdmchk: no credit loop"
}

echo "== ftree, complete 3-level fat tree of 12-port switches (432 hosts)"
start_fabricsim "fattree:radix=12,levels=3"
once minhop
check_verify 'r["unicast"]["unreachable"] == 0' 'r["shift"]["worst"] > 1' >/dev/null
echo "  minhop: worst link load $(python3 -c 'import json; print(json.load(open("'"$WORK"'/verify.json"))["shift"]["worst"])') under a shift permutation"
once ftree
routed_by ftree
check_verify 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' \
	'r["unicast"]["nonminimal"] == 0' 'r["shift"]["checked"] and r["shift"]["worst"] == 1'
echo "  ftree: every shift permutation congestion-free"
ibdmchk_clean
# roots given by file: the cores (their names say so)
"$FS" ctl lids | awk '$4 ~ /^core-/ { print $1 }' >"$WORK/roots"
[ -s "$WORK/roots" ] || fail "no core GUIDs from fabricsim ctl"
once ftree "root_guid_file: $WORK/roots" "log_level: info"
routed_by ftree
grep -q "ftree: $(wc -l <"$WORK/roots") root switch" "$WORK/ibsmd.log" || fail "roots from the file not used: $(grep 'ftree:' "$WORK/ibsmd.log")"
check_verify 'r["unicast"]["unreachable"] == 0' 'r["shift"]["worst"] == 1' >/dev/null
echo "  root_guid_file: $(wc -l <"$WORK/roots") roots, the same result"
stop_sims

echo "== ftree on a quasi fat tree (12 links and 2 switches missing)"
start_fabricsim "fattree:radix=12,levels=3,missing-links=12,missing-switches=2,seed=7"
once ftree
routed_by ftree
! grep -q "routing_fallback\|failed" "$WORK/ibsmd.log" || fail "ftree fell back: $(grep failed "$WORK/ibsmd.log")"
check_verify 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]'
ibdmchk_clean
stop_sims

echo "== dnup"
start_fabricsim "fattree:radix=12,levels=2"
once dnup
routed_by dnup
check_verify 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' 'r["unicast"]["nonminimal"] == 0'
stop_sims
start_fabricsim "$(dirname "$0")/fabrics/random30-updn-loop.net"
once "dnup,updn"
routed_by updn
grep -q "routing engine dnup failed: no down/up route from switch" "$WORK/ibsmd.log" ||
	fail "dnup's failure does not say why: $(grep dnup "$WORK/ibsmd.log")"
check_verify 'r["unicast"]["unreachable"] == 0' 'not r["credit_loops"]["loop"]' >/dev/null
echo "  on an irregular graph: dnup says why it cannot, updn routes"
stop_sims

echo "== file"
start_fabricsim "fattree:radix=8,levels=2,hosts=30"
once minhop
cp "$WORK/dump/opensm-lfts.dump" "$WORK/lfts"
# leaf-1 sends a host of leaf-2 up another spine: take its entry and change the port
sw=$(awk '/^Unicast lids/ && /leaf-1/ { for (i = 1; i <= NF; i++) if ($i == "guid") print $(i + 1) }' "$WORK/lfts")
[ -n "$sw" ] || fail "no leaf-1 in the dump"
read -r lid port < <(awk -v sw="$sw" '/^Unicast lids/ { on = index($0, sw) > 0; next }
	on && /^0x/ && /leaf-2|host-5/ && $2 >= 5 { print $1, $2; exit }' "$WORK/lfts")
[ -n "${lid:-}" ] || fail "no up entry of leaf-1 in the dump"
new=$(printf '%03d' $(((10#$port - 5 + 1) % 4 + 5)))
sed -i "/guid $sw/,/lids dumped/ s/^$lid $port /$lid $new /" "$WORK/lfts"
once file "lfts_file: $WORK/lfts"
routed_by file
# by LID: with --once no SA is left to resolve a GUID
swlid=$("$FS" ctl lids | awk -v g="$sw" '$1 == g { print $2 }')
on_sim host-1 ibroute "$swlid" >"$WORK/ibroute.out" 2>/dev/null || fail "ibroute $swlid ($sw)"
got=$(awk -v l="$lid" '$1 == l { print $2 }' "$WORK/ibroute.out")
[ "$got" = "$new" ] || fail "switch $sw routes $lid to port $got, the file says $new"
check_verify 'r["unicast"]["unreachable"] == 0' >/dev/null
echo "  the hand-edited entry ($lid -> port $new at leaf-1) is what the switch holds"
# a port without a link (leaf-8 has two hosts: ports 3 and 4 are free): refused with the
# reason, minhop takes over
sw8=$(awk '/^Unicast lids/ && /leaf-8/ { for (i = 1; i <= NF; i++) if ($i == "guid") print $(i + 1) }' "$WORK/lfts")
read -r lid8 port8 < <(awk -v sw="$sw8" '/^Unicast lids/ { on = index($0, sw) > 0; next }
	on && /^0x/ && $2 >= 5 { print $1, $2; exit }' "$WORK/lfts")
sed -i "/guid $sw8/,/lids dumped/ s/^$lid8 $port8 /$lid8 003 /" "$WORK/lfts"
once "file,minhop" "lfts_file: $WORK/lfts"
routed_by minhop
grep -q "routing engine file failed: $WORK/lfts: switch \"leaf-8\" .* sends LID $lid8 to port 3, which has no link" "$WORK/ibsmd.log" ||
	fail "the refusal does not name the entry: $(grep 'file failed' "$WORK/ibsmd.log")"
check_verify 'r["unicast"]["unreachable"] == 0' >/dev/null
echo "  a LID sent to a port without a link: refused, naming switch, LID and port; minhop routes"
echo "routing engines: ok"
