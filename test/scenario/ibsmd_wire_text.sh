#!/usr/bin/env bash
# A NodeDescription is 64 bytes that the root user of any host sets to anything: here one
# holding a double quote, a backslash, a newline followed by text that looks like a log line,
# a 0x01 and a byte that is not UTF-8, on two switches and a host. Every JSON output that
# carries it still parses and shows it escaped (the stray byte as U+FFFD): ibsa --json nodes
# (SA NodeRecords), the control socket's dump topology, dump routes and counters, and so does
# the metrics file, where it is a label; a log line naming the node (a link between the two
# switches going down) stays one line, the newline written \x0a.
# Usage: ibsmd_wire_text.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
FS="$BUILD/test/fabricsim/fabricsim"
IBSA="$BUILD/cli/ibsa"
start_fabricsim "fattree:radix=4,levels=2"
# evil"q\b<newline>warn sm: forged<0x01><0xff>
HEX=$(printf 'evil"q\\b\nwarn sm: forged\001\377' | od -An -tx1 | tr -d ' \n')
for n in leaf-1 spine-1 host-2; do
	"$FS" ctl desc "$n" "$HEX" >/dev/null || fail "fabricsim ctl desc $n"
done
SIM_HOST=host-3 start_ibsmd --config <(printf 'pm_interval: 1\nsweep_interval: 0\nmetrics_interval: 1\n')

# the text as JSON must give it: U+FFFD for the byte that is not UTF-8
check() { # FILE WHAT: FILE parses as JSON and holds the description twice (leaf and host)
	python3 - "$1" "$2" <<'PY'
import json, sys
want = 'evil"q\\b\nwarn sm: forged\x01\ufffd'
doc = json.load(open(sys.argv[1], encoding="utf-8"))  # strict: raw bytes fail here
found = []
def walk(v):
    if isinstance(v, dict):
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
    elif v == want:
        found.append(v)
walk(doc)
need = 1 if sys.argv[2] in ("routes",) else 2
if len(found) < need:
    sys.exit(f"{sys.argv[2]}: the description {want!r} found {len(found)} times, not {need}")
PY
}
ctl() { "$IBSA" --control "$WORK/control" --json "$@"; }
SIM_HOST=host-4 "$IBSA" --transport sim --json nodes >"$WORK/nodes.json" || fail "ibsa nodes"
check "$WORK/nodes.json" nodes || fail "ibsa --json nodes: $(cat "$WORK/nodes.json")"
ctl dump topology >"$WORK/topology.json" || fail "dump topology"
check "$WORK/topology.json" topology || fail "dump topology --json: $(cat "$WORK/topology.json")"
ctl dump routes >"$WORK/routes.json" || fail "dump routes"
check "$WORK/routes.json" routes || fail "dump routes --json: $(cat "$WORK/routes.json")"
counted() { ctl counters >"$WORK/counters.json" && check "$WORK/counters.json" counters; }
wait_until 20 counted || fail "counters --json: $(cat "$WORK/counters.json")"
echo "ibsa --json nodes, dump topology, dump routes, counters: parse, description escaped: ok"

# the text dumps quote or bracket it (ibnetdiscover "...", the LFT dump '...', counters):
# there it is \xNN for the quote, backslash, newline, 0x01 and the stray byte, never split
esc='evil\x22q\x5cb\x0awarn sm: forged\x01\xff'
"$IBSA" --control "$WORK/control" dump topology >"$WORK/topology.txt" || fail "dump topology"
n=$(grep -c -F "\"$esc\"" "$WORK/topology.txt" || true)
[ "$n" -ge 3 ] || fail "ibnetdiscover dump ($n lines): $(grep -n -a 'evil' "$WORK/topology.txt" | head -3)"
"$IBSA" --control "$WORK/control" dump routes >"$WORK/routes.txt" || fail "dump routes"
grep -q -F "('$esc')" "$WORK/routes.txt" || fail "LFT dump: $(grep -a -m2 evil "$WORK/routes.txt")"
"$IBSA" --control "$WORK/control" counters >"$WORK/counters.txt" || fail "counters"
grep -q -a '^warn sm\|^q\\b' "$WORK/topology.txt" "$WORK/routes.txt" "$WORK/counters.txt" &&
	fail "a text dump has a line the description began: $(grep -a -n '^warn sm' "$WORK"/*.txt)"
echo "text dumps: the description escaped within its quotes, on its line: ok"

# the metrics file names a port with errors by its node's description, as a label
"$FS" ctl errors leaf-1 1 symbol_errors 5 >/dev/null
prom() {
	/usr/bin/python3 - "$WORK/state/ibsmd.prom" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
want = 'evil"q\\b\nwarn sm: forged\x01\ufffd'
text = open(sys.argv[1], encoding="utf-8").read()  # strict: raw bytes fail here
nodes = [s.labels.get("node") for f in text_string_to_metric_families(text) for s in f.samples]
sys.exit(0 if want in nodes else 1)
PY
}
wait_until 20 prom || fail "the metrics file: $(grep port_counter_total "$WORK/state/ibsmd.prom" | cat -A | head -3)"
echo "metrics file: parses, the description a label, escaped: ok"

# a line about the leaf: its link to spine-1 goes down (both ends carry the description)
port=$(for p in 1 2 3 4; do "$FS" ctl port leaf-1 $p | grep -q '"spine-1"' && echo $p; done || true)
[ -n "$port" ] || fail "leaf-1 has no link to spine-1: $("$FS" ctl port leaf-1 3)"
"$FS" ctl link down leaf-1 "$port" >/dev/null
wait_until 20 grep -q "link down at" "$WORK/ibsmd.log" || fail "no link down line"
grep -q '^warn sm: forged' "$WORK/ibsmd.log" && fail "a NodeDescription forged a log line: $(grep -B1 '^warn sm: forged' "$WORK/ibsmd.log")"
grep "link down at" "$WORK/ibsmd.log" | has -F 'evil"q\b\x0awarn sm: forged\x01\xff' ||
	fail "the log line does not show the description escaped: $(grep 'link down at' "$WORK/ibsmd.log")"
echo "log: the description on one line, \\x0a for its newline: ok"
