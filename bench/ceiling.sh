#!/usr/bin/env bash
# ceiling.sh: how close ibsmd's bring-up comes to the most a simulator can answer.
#
#   bench/ceiling.sh BUILD_DIR [SPEC]
#
# On each simulator (SIMS, default "fabricsim ibsim"), in one run:
#   (a) the simulator's own SMP service rate on this fabric: bench/mad_rate sends only
#       directed-route NodeInfo Gets to switches 1, 2 and 3 hops from host-1, round robin,
#       as fast as they are answered (windows of 64 and 256 in flight; the better counts);
#   (b) ibsmd --once on a freshly loaded copy of the fabric, through the sim transport as (a)
#       (IBSIM_TRANSPORT=umad: on ibsim the umad transport under libumad2sim.so, as on
#       hardware, where the preload's reader thread bounds it): wall time, its own
#       phase times, peak memory, and on fabricsim the SMPs it sent by method and attribute
#       (fabricsim ctl smp-counts) and fabricsim verify;
#   (c) the ceiling: those SMPs at the rate of (a), and ibsmd's share of it (ceiling time
#       over ibsmd's sweep time; 100% would be a sweep that only waits on the simulator).
# ibsim cannot count by attribute: its SMP count is fabricsim's for the same fabric (the
# same SM sends the same SMPs; retries aside). OpenSM's `--once` on the same fabric is timed
# beside (OPENSM=0 leaves it out: on 40,000 hosts it takes minutes).
#
# (d) the takeover sweep (TAKEOVER=0 leaves it out): after each bring-up, a second ibsmd
#     --once with the first one's state on the fabric it programmed, as a standby taking
#     over finds it: it reads the switches' tables before routing and writes only what is
#     wrong; its SMPs (fabricsim's count) at the rate of (a) over its sweep time.
# REPS (default 3): rate and bring-up pairs per simulator, medians printed, the share the
# median of each pair's; VERIFY=0 leaves out fabricsim verify (12 minutes at 40,000 hosts).
# SPEC: a fabricsim generator spec or a net file; default the 40,000-host fat tree of
# 64-port switches (issue 48). Figures, never a CI verdict. A release build:
# cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel -j2
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [SPEC]}" && pwd)
SPEC=${2:-fattree:radix=64,levels=3,hosts=40000}
SIMS=${SIMS:-fabricsim ibsim}
FS=$BUILD/test/fabricsim/fabricsim
RATE=$BUILD/bench/mad_rate
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
for f in "$FS" "$RATE" "$BUILD/daemon/ibsmd"; do
	[ -x "$f" ] || { echo "ceiling.sh: $f missing: build first" >&2; exit 2; }
done
WORK=$(mktemp -d /tmp/ceiling.XXXXXX)
export IBSIM_SOCKNAME="ceiling-$$"
SIMPID=
trap '[ -n "$SIMPID" ] && kill $SIMPID 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
die() {
	echo "ceiling.sh: $*" >&2
	exit 1
}

sim_up() { # SIM: the fabric loaded afresh; returns when it answers (ibsim parses for seconds)
	local n p ready
	if [ "$1" = fabricsim ]; then
		(cd "$WORK" && exec "$FS" "$WORK/fabric.net" >"$WORK/sim.log" 2>&1) &
		ready="serving on"
	else
		command -v ibsim >/dev/null || die "ibsim is not installed (package ibsim-utils)"
		# -L: its LFTs hold 30,720 LIDs unless told (it crashed at 40,000 hosts without)
		n=$(grep -c '^\(Switch\|Ca\|Hca\)' "$WORK/fabric.net")
		p=$(awk '/^(Switch|Ca|Hca)/ { n += $2 + 1 } END { print n + 16 }' "$WORK/fabric.net")
		(cd "$WORK" && exec ibsim -s --no-console -N $((n + 16)) -S $((n + 16)) -P "$p" -L $(((n / 64 + 2) * 64)) \
			"$WORK/fabric.net" >"$WORK/sim.log" 2>&1) &
		ready="simulator ready"
	fi
	SIMPID=$!
	for _ in $(seq 1 1200); do
		grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && grep -q "$ready" "$WORK/sim.log" && return 0
		kill -0 $SIMPID 2>/dev/null || die "$1 died: $(tail -3 "$WORK/sim.log")"
		sleep 0.1
	done
	die "$1 not ready in 120 s"
}

sim_down() {
	kill $SIMPID 2>/dev/null || true
	wait $SIMPID 2>/dev/null || true
	SIMPID=
}

"$FS" dump "$SPEC" >"$WORK/fabric.net"
hosts=$(grep -c '^\(Ca\|Hca\)' "$WORK/fabric.net")
switches=$(grep -c '^Switch' "$WORK/fabric.net")

# directed routes from host-1 to a switch 1, 2 and 3 hops away: up the tree by each
# switch's first port whose peer is a switch not seen yet
sim_up fabricsim
routes=(-r 0,1)
path=0,1
seen=" "
node=$("$FS" ctl port host-1 1 | sed -n 's/.* peer "\([^"]*\)" .*/\1/p')
for _ in 2 3; do
	seen+="$node "
	next=
	for p in $(seq 1 128); do
		line=$("$FS" ctl port "$node" "$p" 2>/dev/null | head -1) || break
		[[ $line == state* ]] || break
		peer=$(sed -n 's/.* peer "\([^"]*\)" .*/\1/p' <<<"$line")
		[ -n "$peer" ] || continue
		case "$seen" in *" $peer "*) continue ;; esac
		if "$FS" ctl port "$peer" 0 >/dev/null 2>&1 && "$FS" ctl lft "$peer" >/dev/null 2>&1; then
			next=$peer
			path+=",$p"
			break
		fi
	done
	[ -n "$next" ] || break
	node=$next
	routes+=(-r "$path")
done
sim_down

# REPS pairs per simulator, each the rate and then a bring-up: this VM's speed changes by the
# minute (single bring-ups of one binary spread by a third), so each share is a rate and a
# bring-up measured side by side, and the medians are printed
REPS=${REPS:-3}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A rate wall sweep kb line smps share tline tsweep
tsmps=
for sim in $SIMS; do
	: >"$WORK/pairs-$sim"
	for ((rep = 1; rep <= REPS; rep++)); do
		sim_up "$sim"
		best=0
		for w in 64 256; do
			r=$("$RATE" -n 200000 -w "$w" "${routes[@]}" 2>/dev/null | awk '{ printf "%d", $3 }') || r=0
			[ "${r:-0}" -gt "$best" ] && best=$r
		done
		sim_down

		sim_up "$sim"
		rm -rf "$WORK/state"
		tr=sim pre=
		[ "$sim" = ibsim ] && [ "${IBSIM_TRANSPORT:-sim}" = umad ] && { tr=umad; pre=$UMAD2SIM; }
		(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$pre /usr/bin/time -f '%e %M' -o "$WORK/time" \
			timeout 900 "$BUILD/daemon/ibsmd" --transport "$tr" --once --state-dir "$WORK/state" \
			--control-socket "" >"$WORK/ibsmd-$sim.out" 2>"$WORK/ibsmd-$sim.log") ||
			echo "ceiling.sh: ibsmd on $sim: $(head -c 300 "$WORK/ibsmd-$sim.out"; tail -2 "$WORK/sim.log")" >&2
		read -r w k <"$WORK/time"
		line[$sim]=$(grep 'subnet up:' "$WORK/ibsmd-$sim.log" | tail -1) || true
		t=$(sed -n 's/.*total \([0-9.]*\) s.*/\1/p' <<<"${line[$sim]}")
		if [ "$sim" = fabricsim ] && [ -z "${smps[fabricsim]:-}" ]; then
			"$FS" ctl smp-counts >"$WORK/smp-counts"
			smps[fabricsim]=$(awk '{ n += $3 } END { print n }' "$WORK/smp-counts")
		fi
		tt=0
		if [ "${TAKEOVER:-1}" != 0 ]; then
			# the takeover sweep: a second ibsmd --once with the first one's state (its
			# keys, as a standby holds them) on the fabric the first programmed; it finds
			# the switches' tables set, reads them before routing and writes only what
			# is wrong, as a standby taking over does
			[ "$sim" = fabricsim ] && "$FS" ctl smp-counts >"$WORK/smp-before"
			(cd "$WORK" && SIM_HOST=host-1 LD_PRELOAD=$pre timeout 900 "$BUILD/daemon/ibsmd" \
				--transport "$tr" --once --state-dir "$WORK/state" --control-socket "" \
				>"$WORK/takeover-$sim.out" 2>"$WORK/takeover-$sim.log") ||
				echo "ceiling.sh: ibsmd's takeover on $sim: $(head -c 300 "$WORK/takeover-$sim.out")" >&2
			tline[$sim]=$(grep 'subnet up:' "$WORK/takeover-$sim.log" | tail -1) || true
			tt=$(sed -n 's/.*total \([0-9.]*\) s.*/\1/p' <<<"${tline[$sim]}")
			if [ "$sim" = fabricsim ] && [ -z "${tsmps:-}" ]; then
				"$FS" ctl smp-counts >"$WORK/smp-after"
				# what the takeover sent: the counts' growth, by method and attribute
				awk 'NR == FNR { b[$1 " " $2] = $3; next }
					$3 > b[$1 " " $2] { print $1, $2, $3 - b[$1 " " $2] }' \
					"$WORK/smp-before" "$WORK/smp-after" >"$WORK/smp-takeover"
				tsmps=$(awk '{ n += $3 } END { print n + 0 }' "$WORK/smp-takeover")
			fi
		fi
		if [ "$sim" = fabricsim ] && [ "$rep" = "$REPS" ] && [ "${VERIFY:-1}" != 0 ]; then
			verdict=$("$FS" verify 2>&1 | tail -1)
		fi
		sim_down
		echo "$best ${t:-0} $w $k ${tt:-0}" >>"$WORK/pairs-$sim"
	done
	rate[$sim]=$(awk '{ print $1 }' "$WORK/pairs-$sim" | median)
	sweep[$sim]=$(awk '{ print $2 }' "$WORK/pairs-$sim" | median)
	wall[$sim]=$(awk '{ print $3 }' "$WORK/pairs-$sim" | median)
	kb[$sim]=$(awk '{ print $4 }' "$WORK/pairs-$sim" | median)
	tsweep[$sim]=$(awk '{ print $5 }' "$WORK/pairs-$sim" | median)
	if [ "${OPENSM:-1}" != 0 ] && command -v opensm >/dev/null; then
		sim_up "$sim"
		pre=$UMAD2SIM
		[ "$sim" = fabricsim ] && pre=$BUILD/test/fabricsim/libfabricsim-umad.so
		mkdir -p "$WORK/osm-$sim"
		(cd "$WORK" && SIM_HOST=host-1 OSM_TMP_DIR="$WORK/osm-$sim" OSM_CACHE_DIR="$WORK/osm-$sim" \
			LD_PRELOAD=$pre /usr/bin/time -f '%e %M' -o "$WORK/osm-$sim/time" timeout 1800 \
			opensm --once -f "$WORK/osm-$sim/opensm.log" >/dev/null 2>&1) || true
		sim_down
	fi
done
[ -n "${smps[fabricsim]:-}" ] || die "the SMP count comes from fabricsim: SIMS must include it"

echo "$SPEC: $hosts hosts, $switches switches; $(nproc) cores"
echo "rate: DR NodeInfo Gets by ${routes[*]}"
printf '%-10s %12s %10s %11s %10s %10s %7s %9s %14s\n' simulator "ceiling/s" SMPs "ceiling s" \
	"sweep s" "wall s" share "ibsmd MB" "OpenSM"
for sim in $SIMS; do
	osm="-"
	if [ -f "$WORK/osm-$sim/time" ] && grep -q "SUBNET UP" "$WORK/osm-$sim/opensm.log" 2>/dev/null; then
		osm=$(awk '{ printf "%.1f s %d MB", $1, $2 / 1024 }' "$WORK/osm-$sim/time")
	elif [ -d "$WORK/osm-$sim" ]; then
		osm="not up"
	fi
	# the share: the median of each pair's (its rate and its bring-up, side by side)
	sh=$(awk -v n="${smps[fabricsim]}" '{ print ($1 && $2) ? 100 * n / $1 / $2 : 0 }' "$WORK/pairs-$sim" | median)
	awk -v s="$sim" -v r="${rate[$sim]}" -v n="${smps[fabricsim]}" -v t="${sweep[$sim]}" \
		-v w="${wall[$sim]}" -v kb="${kb[$sim]}" -v o="$osm" -v sh="$sh" 'BEGIN {
		c = r ? n / r : 0
		printf "%-10s %12d %10d %11.2f %10.2f %10.2f %6.0f%% %9d %14s\n", s, r, n, c, t, w,
			sh, kb / 1024, o }'
done
for sim in $SIMS; do
	echo "pairs on $sim (rate/s, sweep s, wall s, KB):" $(awk '{ printf "[%d %.2f %.2f %d] ", $1, $2, $3, $4 }' "$WORK/pairs-$sim")
done
for sim in $SIMS; do
	echo "ibsmd's phases on $sim: $(sed -n 's/.*\(discovery [0-9.]* s.*total [0-9.]* s\).*/\1/p' <<<"${line[$sim]}")"
done
if [ "${TAKEOVER:-1}" != 0 ] && [ -n "$tsmps" ]; then
	echo "takeover sweep (a second ibsmd with the first one's state, on the fabric it programmed): $tsmps SMPs"
	printf '%-10s %12s %10s %11s %10s %7s\n' simulator "ceiling/s" SMPs "ceiling s" "sweep s" share
	for sim in $SIMS; do
		sh=$(awk -v n="$tsmps" '{ print ($1 && $5) ? 100 * n / $1 / $5 : 0 }' "$WORK/pairs-$sim" | median)
		awk -v s="$sim" -v r="${rate[$sim]}" -v n="$tsmps" -v t="${tsweep[$sim]}" -v sh="$sh" 'BEGIN {
			printf "%-10s %12d %10d %11.2f %10.2f %6.0f%%\n", s, r, n, r ? n / r : 0, t, sh }'
		echo "  sweeps $(awk '{ printf "%.2f ", $5 }' "$WORK/pairs-$sim")s; phases: $(sed -n 's/.*LIDs; routed by [a-z]*; \(.*\)/\1/p' <<<"${tline[$sim]}")"
	done
fi
after=
[ "${TAKEOVER:-1}" != 0 ] && after=" and its takeover"
echo "fabricsim verify after ibsmd$after: ${verdict:-not run (VERIFY=0)}"
by_attribute() { # FILE of fabricsim's smp-counts
	python3 - "$1" <<'PY'
import sys
names = {0x10: "NodeDescription", 0x11: "NodeInfo", 0x12: "SwitchInfo", 0x14: "GUIDInfo",
         0x15: "PortInfo", 0x16: "P_KeyTable", 0x17: "SLtoVLMappingTable",
         0x18: "VLArbitrationTable", 0x19: "LinearForwardingTable",
         0x1b: "MulticastForwardingTable", 0x20: "SMInfo", 0x32: "PortInfoExtended"}
for l in open(sys.argv[1]):
    m, a, n = l.split()
    name = names.get(int(a, 16), a) if a != "other" else "other"
    print(f"  {m:3} {name:26} {int(n):10d}")
PY
}
echo "SMPs ibsmd sent, by attribute (fabricsim's count):"
by_attribute "$WORK/smp-counts"
if [ -s "$WORK/smp-takeover" ]; then
	echo "SMPs the takeover sent, by attribute:"
	by_attribute "$WORK/smp-takeover"
fi
