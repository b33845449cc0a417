#!/usr/bin/env bash
# The fabric health report, from outside: `ibsa health` on a fat tree whose cabling has two
# inter-switch links trained below their ends, a partition in ibsmd.yaml naming a GUID the
# fabric does not have, and error counters fabricsim raises on a port:
# - text and --json agree; every check is there; sm and routing are ok (the routing check
#   walked every endpoint to every LID); links warns with the two slow links, as fabricsim
#   verify counts them; errors names the port whose symbol errors pass 10 an hour and the
#   one that waits for credit, not the one under the threshold; partitions names the GUID
#   and the host whose P_Key table Sets fabricsim refuses;
#   the exit status is 6 (a warning);
# - --compare with the fabric's own ibnetdiscover file and a node-name-map: topology ok; a
#   saved plan in which two hosts' cables are swapped: the four ends named as miswired, with
#   the map's names, exit 7 (text and --json); a cable pulled: one missing cable; a saved
#   file that is not one: its line named, exit 2;
# - the API listener's GET /health answers the same report (200, 503 when a check fails),
#   /ufmRest/app/alarms one UFM alarm per finding, naming the node by GUID and path, and
#   /ufmRest/app/events the recent events in UFM's shape;
# - min-hop's tables on a torus: routing fails with the credit loop fabricsim verify finds;
# - a fabric where two HCA ports answer with one port GUID: duplicates fails, naming the
#   GUID, and the exit status is 7.
# Usage: ibsmd_health.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
health() { "$IBSA" --control "$WORK/control" "$@" health; }

start_fabricsim "fattree:radix=8,levels=2,slow-links=2"
api_keys
read -r API _ < <(free_port_pair)
api_yaml "$API" | grep -v sweep_interval >"$WORK/api.yaml"
# get PATH [USER:PASS]: the API's answer, its HTTP status on the last line
get() { curl -s --cacert "$WORK/cert.pem" -u "${2:-ib-kubernetes:k8s-secret}" -w '\n%{http_code}' "https://127.0.0.1:$API$1"; }
cat "$WORK/api.yaml" - >"$WORK/ibsmd.yaml" <<'YAML'
pm_interval: 1
sweep_interval: 0
partitions:
  - name: default
    pkey: 0x7fff
    membership: full
    members: all
  - name: storage
    pkey: 0x0010
    membership: full
    members: [0x0002c9feedface01]
YAML
# host-5 refuses every P_Key table Set: its table is not what the partitions give
"$FS" ctl refuse host-5 0x16 >/dev/null || fail "ctl refuse"
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
# errors a port counted before the PM first read it are history, not news: raised after
pm_swept() { [ "$(status_field 's["pm"]["sweeps"]')" -ge 1 ]; }
wait_until 20 pm_swept || fail "the PM did not sweep"
# leaf-3 port 2 over the 10 symbol errors an hour; leaf-4 port 2 under them (3); leaf-2
# port 3 waiting for credit far more than it sends (XmitWait)
"$FS" ctl errors leaf-3 2 symbol_errors 17 >/dev/null || fail "ctl errors"
"$FS" ctl errors leaf-4 2 symbol_errors 3 >/dev/null || fail "ctl errors"
"$FS" ctl errors leaf-2 3 xmit_wait 5000000 >/dev/null || fail "ctl errors"
counted() { "$IBSA" --control "$WORK/control" --json counters "$1" | grep -q "$2"; }
errors_seen() {
	counted leaf-3 '"symbol_errors":17' && counted leaf-4 '"symbol_errors":3' &&
		counted leaf-2 '"xmit_wait":5000000'
}
wait_until 20 errors_seen || fail "the PM did not read the errors raised"

rc=0
health >"$WORK/health.txt" 2>"$WORK/health.err" || rc=$?
[ "$rc" = 6 ] || fail "ibsa health: rc $rc, want 6 (warnings): $(cat "$WORK/health.txt" "$WORK/health.err")"
grep -q "^ibsa: fabric health: some checks warn" "$WORK/health.err" || fail "no verdict on stderr: $(cat "$WORK/health.err")"
rc=0
health --json >"$WORK/health.json" 2>/dev/null || rc=$?
[ "$rc" = 6 ] || fail "ibsa --json health: rc $rc"
slow=$("$FS" verify | sed -n 's/.*; \([0-9]*\) slower than both ends could run.*/\1/p')
python3 - "$WORK/health.json" "$WORK/health.txt" "$slow" <<'PY' || fail "the report: $(cat "$WORK/health.txt")"
import json, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
c = {x["name"]: x for x in r["checks"]}
assert list(c) == ["sm", "duplicates", "ports", "links", "errors", "routing", "partitions"], list(c)
assert r["status"] == "warn", r["status"]
assert c["sm"]["status"] == "ok" and "master, subnet up" in c["sm"]["summary"], c["sm"]
assert c["duplicates"]["status"] == "ok" and c["duplicates"]["count"] == 0, c["duplicates"]
assert c["routing"]["status"] == "ok" and "endpoint-to-LID pairs" in c["routing"]["summary"], c["routing"]
pairs = int(c["routing"]["summary"].split()[0])
assert pairs > 1000, pairs
assert c["links"]["status"] == "warn" and c["links"]["count"] == int(sys.argv[3]) == 2, (c["links"], sys.argv[3])
assert all("where both ends could run" in i for i in c["links"]["items"]), c["links"]
e = c["errors"]
assert e["status"] == "warn" and e["count"] == 2, e
assert any(i.startswith("leaf-3 ") and "port 2: 17 symbol_errors in 0.0 h, 17 an hour (threshold 10): check the cable" in i for i in e["items"]), e
assert any(i.startswith("leaf-2 ") and "port 3: waited for credit" in i and "(XmitWait 5000000 ticks, threshold 10%): congestion" in i for i in e["items"]), e
assert not any(i.startswith("leaf-4 ") for i in e["items"]) and "; 1 with errors under the thresholds" in e["summary"], e
p = c["partitions"]
assert p["status"] == "warn" and any("storage (0x0010): member 0x0002c9feedface01" in i for i in p["items"]), p
assert p["count"] == 2 and any(i.startswith("host-5 ") and "its P_Key table could not be set" in i for i in p["items"]), p
assert "1 P_Key tables not as the partitions give" in p["summary"], p
for name, x in c.items():  # the text says the same
    assert any(l.startswith("%-4s  %s" % (x["status"], name)) for l in text.splitlines()), (name, text)
PY
echo "ibsa health: sm and routing ok ($(grep -o '[0-9]* endpoint-to-LID pairs' "$WORK/health.txt")), 2 slow links, leaf-3's symbol errors and leaf-2's XmitWait (not leaf-4's 3 errors), a partition member not in the fabric: warn, exit 6: ok"

# the same on the API listener: GET /health (200 with warnings), and UFM's alarms and events
get /health >"$WORK/api-health" || fail "GET /health"
get /ufmRest/app/alarms >"$WORK/alarms" || fail "GET alarms"
get /ufmRest/app/events >"$WORK/events" || fail "GET events"
[ "$(get /health ib-kubernetes:wrong | tail -1)" = 401 ] || fail "GET /health with a wrong password: $(get /health ib-kubernetes:wrong | tail -1)"
"$FS" ctl lids >"$WORK/lids"
python3 - "$WORK/api-health" "$WORK/health.json" "$WORK/alarms" "$WORK/events" "$WORK/lids" <<'PY' || fail "the API's health, alarms and events"
import json, re, sys
def body(f):
    text = open(f).read().rsplit("\n", 1)
    return json.loads(text[0]), int(text[1])
h, code = body(sys.argv[1])
assert code == 200, code
ctl = json.load(open(sys.argv[2]))
assert [(c["name"], c["status"], c["count"]) for c in h["checks"]] == [(c["name"], c["status"], c["count"]) for c in ctl["checks"]], (h, ctl)
alarms, code = body(sys.argv[3])
assert code == 200, code
guids = {}
for l in open(sys.argv[5]):
    w = l.split()
    guids.setdefault(w[3], w[0])
by = {}
for a in alarms:
    for k in ("id", "name", "summary", "reason", "severity", "event_type", "type", "event_count", "timestamp", "duration", "counter", "related_object_name", "related_object_path"):
        assert k in a, (k, a)
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$", a["timestamp"]), a
    by.setdefault(a["name"], []).append(a)
assert [a["id"] for a in alarms] == list(range(1, len(alarms) + 1)), alarms
slow = by["Link below capability"]
assert len(slow) == 2 and all(a["severity"] == "Warning" and "where both ends could run" in a["reason"] for a in slow), slow
err = sorted(by["Port error counters"], key=lambda a: a["related_object_path"])
assert len(err) == 2 and [a["related_object_path"] for a in err] == ["default / Switch: leaf-2", "default / Switch: leaf-3"], err
assert err[1]["related_object_name"] == guids["leaf-3"][2:].rjust(16, "0"), (err, guids["leaf-3"])
part = by["Partition not as configured"]
assert len(part) == 2 and part[0]["related_object_name"] == "Grid" and "0x0002c9feedface01" in part[0]["reason"], part
assert part[1]["related_object_path"] == "default / Computer: host-5 HCA-1" and part[1]["related_object_name"] == guids["host-5"][2:].rjust(16, "0"), part
assert len(alarms) == 6, [a["name"] for a in alarms]
events, code = body(sys.argv[4])
assert code == 200 and events, (code, events)
up = [e for e in events if e["name"] == "subnet_up"]
assert up and up[0]["severity"] == "Info" and up[0]["object_name"] == "Grid" and up[0]["category"] == "Fabric Notification", up
assert [e["id"] for e in events] == sorted(e["id"] for e in events), events
for e in events:
    assert set(e) == {"id", "name", "type", "event_type", "severity", "timestamp", "counter", "category", "object_name", "object_path", "write_to_syslog", "description"}, e
print(len(alarms), len(events))
PY
echo "GET /health as ibsa's, 200 with warnings, 401 with a wrong password; UFM's alarms (2 slow links, leaf-3's and leaf-2's counters by GUID, the partition member, host-5's P_Key table) and events: ok"

# the cabling against the topology a site saved: ibnetdiscover's own file, and a
# node-name-map naming every node otherwise than its description
on_sim host-2 ibnetdiscover >"$WORK/saved.topo" 2>"$WORK/ibnetdiscover.err" ||
	fail "ibnetdiscover: $(cat "$WORK/ibnetdiscover.err")"
awk '/^(switchguid|caguid)=/ { split($0, a, /[=(]/); g = a[2] }
	/^(Switch|Ca)[ \t]/ { match($0, /# "[^"]*"/); d = substr($0, RSTART + 3, RLENGTH - 4); split(d, w, " ")
		printf "%s \"site-%s\"\n", g, w[1] }' "$WORK/saved.topo" >"$WORK/names.map"
[ "$(wc -l <"$WORK/names.map")" -gt 20 ] || fail "the test's node-name-map: $(head -3 "$WORK/names.map")"
compare() { "$IBSA" --control "$WORK/control" "${@:2}" health --compare "$1" --node-name-map "$WORK/names.map"; }
rc=0
compare "$WORK/saved.topo" >"$WORK/cmp.txt" 2>"$WORK/cmp.err" || rc=$?
[ "$rc" = 6 ] && grep -q "^ok    topology" "$WORK/cmp.txt" ||
	fail "the fabric against its own ibnetdiscover: rc $rc: $(grep -A3 topology "$WORK/cmp.txt") $(cat "$WORK/cmp.err")"
# a plan in which host-1 and host-3 sit at each other's ports: each end of both cables is
# named, by the map's names
python3 - "$WORK/saved.topo" "$WORK/swapped.topo" <<'PY' || fail "the test's swap"
import re, sys
text = open(sys.argv[1]).read()
ids = dict(re.findall(r'^(?:Ca|Switch)\s+\d+\s+"([^"]+)"\s+#\s+"([^"\s]+)', text, re.M))
by = {d: i for i, d in ids.items()}
h1, h3 = by["host-1"], by["host-3"]
# the lines naming each host as a far end, and the hosts' own lines
a = re.search(r'^(\[\d+\](?:\[ext \d+\])?\s+)"%s"(\[1\]\([0-9a-f]+\))' % h1, text, re.M)
b = re.search(r'^(\[\d+\](?:\[ext \d+\])?\s+)"%s"(\[1\]\([0-9a-f]+\))' % h3, text, re.M)
pa, pb = a.group(0), b.group(0)
text = text.replace(pa, "\0A").replace(pb, "\0B")
text = text.replace("\0A", a.group(1) + '"%s"' % h3 + b.group(2)).replace("\0B", b.group(1) + '"%s"' % h1 + a.group(2))
blk = lambda h: re.search(r'^Ca\s+\d+\s+"%s".*?\n(\[1\]\([0-9a-f]+\)\s+"[^"]+"\[\d+\])' % h, text, re.M | re.S)
l1, l3 = blk(h1).group(1), blk(h3).group(1)
far = lambda l: l[l.index('"'):]
text = text.replace(l1, "\0C").replace(l3, "\0D")
text = text.replace("\0C", l1[:l1.index('"')] + far(l3)).replace("\0D", l3[:l3.index('"')] + far(l1))
open(sys.argv[2], "w").write(text)
PY
rc=0
compare "$WORK/swapped.topo" >"$WORK/swap.txt" 2>"$WORK/swap.err" || rc=$?
[ "$rc" = 7 ] && grep -q "^fail  topology .*; 4 found" "$WORK/swap.txt" &&
	[ "$(grep -c "miswired: site-host-[13] (0x[0-9a-f]*) port 1 goes to site-leaf-[0-9]* .*, saved: to site-leaf-" "$WORK/swap.txt")" = 2 ] &&
	[ "$(grep -c "miswired: site-leaf-[0-9]* (0x[0-9a-f]*) port [0-9]* goes to site-host-[13] .*, saved: to site-host-[13]" "$WORK/swap.txt")" = 2 ] ||
	fail "two swapped cables: rc $rc: $(grep -A6 topology "$WORK/swap.txt")"
rc=0
compare "$WORK/swapped.topo" --json >"$WORK/swap.json" 2>/dev/null || rc=$?
python3 - "$WORK/swap.json" <<'PY' || fail "--json with --compare: $(cat "$WORK/swap.json")"
import json, sys
r = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in r["checks"]}
assert r["status"] == "fail" and c["topology"]["status"] == "fail" and c["topology"]["count"] == 4, r
assert c["links"]["status"] == "warn"
PY
[ "$rc" = 7 ] || fail "--json --compare: rc $rc"
# a cable between two switches pulled: one missing cable
"$FS" ctl link down leaf-1 5 >/dev/null || fail "ctl link"
"$IBSA" --control "$WORK/control" sweep heavy >/dev/null
pulled_seen() {
	compare "$WORK/saved.topo" >"$WORK/pulled.txt" 2>&1
	grep -q "^fail  topology .*; 1 found" "$WORK/pulled.txt"
}
wait_until 20 pulled_seen || fail "a pulled cable: $(grep -A3 topology "$WORK/pulled.txt")"
rc=0
compare "$WORK/saved.topo" >"$WORK/pulled.txt" 2>&1 || rc=$?
[ "$rc" = 7 ] && grep -qE "missing cable: site-(leaf-1 .* port 5 to site-spine-[0-9]+|spine-[0-9]+ .* to site-leaf-1 .* port 5)" "$WORK/pulled.txt" ||
	fail "a pulled cable: rc $rc: $(grep -A3 topology "$WORK/pulled.txt")"
# a saved file that is not one: its line named, usage exit
printf 'caguid=0x1\nCa 1 "a"\n[1]\t"b"[1]\n' >"$WORK/bad.topo"
rc=0
compare "$WORK/bad.topo" >/dev/null 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad.topo:3: the far end is not a node of the file" "$WORK/bad.err" ||
	fail "a bad saved file: rc $rc: $(cat "$WORK/bad.err")"
echo "ibsa health --compare: its own ibnetdiscover ok; two swapped cables, 4 ends miswired; a pulled cable missing; a bad file named with its line: ok"
stop_pids "$IBSMD_PID"

# a credit loop in the tables the SM left: min-hop on a torus is minimal and closes one
# (fabricsim verify finds it too); routing fails naming the SL, and nothing else does
stop_sims
start_fabricsim "torus:dims=4x4x4,hosts=1"
SIM_HOST=host-1 start_ibsmd --sweep-interval 0 --routing-engine minhop --config "$WORK/api.yaml"
[ "$("$FS" verify --json | python3 -c 'import json,sys; print(bool(json.load(sys.stdin)["credit_loops"]["loop"]))')" = True ] ||
	fail "fabricsim verify finds no credit loop in min-hop's torus tables"
rc=0
health --json >"$WORK/loop.json" 2>/dev/null || rc=$?
python3 - "$WORK/loop.json" <<'PY' || fail "a credit loop: rc $rc: $(cat "$WORK/loop.json")"
import json, sys
r = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in r["checks"]}
assert r["status"] == "fail", r["status"]
assert c["routing"]["status"] == "fail" and any("a credit loop on SL 0" in i for i in c["routing"]["items"]), c["routing"]
assert not any("unreachable" in i or "forwarding loop" in i for i in c["routing"]["items"]), c["routing"]
bad = [n for n, x in c.items() if n != "routing" and x["status"] != "ok"]
assert not bad, [c[n] for n in bad]
PY
[ "$rc" = 7 ] || fail "a credit loop: rc $rc, want 7"
[ "$(get /health | tail -1)" = 503 ] || fail "GET /health with a failing check: $(get /health | tail -1)"
get /ufmRest/app/alarms | head -n -1 | grep -q '"name":"Routing unhealthy","summary":"Routing unhealthy","reason":"a credit loop on SL 0' ||
	fail "no Critical routing alarm: $(get /ufmRest/app/alarms)"
echo "min-hop's credit loop on a torus: routing fails naming SL 0, the rest ok, exit 7: ok"
stop_pids "$IBSMD_PID"

# two HCA ports with one port GUID
cat >"$WORK/dup.net" <<'NET'
switchguid=0x0002c90000000100
Switch 4 "sw1"
[1]	"h1"[1]
[2]	"h2"[1]
[3]	"h3"[1]
caguid=0x0002c90000000200
Ca 1 "h1"
[1](2c90000000201)	"sw1"[1]
caguid=0x0002c90000000300
Ca 1 "h2"
[1](2c90000000999)	"sw1"[2]
caguid=0x0002c90000000400
Ca 1 "h3"
[1](2c90000000999)	"sw1"[3]
NET
stop_sims
start_fabricsim "$WORK/dup.net"
SIM_HOST=h1 start_ibsmd --sweep-interval 0
rc=0
health >"$WORK/dup.txt" 2>"$WORK/dup.err" || rc=$?
[ "$rc" = 7 ] || fail "ibsa health with a duplicate port GUID: rc $rc, want 7: $(cat "$WORK/dup.txt")"
grep -q "^fail  duplicates" "$WORK/dup.txt" && grep -q "port GUID 0x0002c90000000999 at route .* is another port's" "$WORK/dup.txt" ||
	fail "the duplicate is not named: $(cat "$WORK/dup.txt")"
grep -q "^ibsa: fabric health: a check fails" "$WORK/dup.err" || fail "no verdict: $(cat "$WORK/dup.err")"
echo "a port GUID on two HCAs: duplicates fails naming it, exit 7: ok"
echo "PASS"
