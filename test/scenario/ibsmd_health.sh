#!/usr/bin/env bash
# The fabric health report, from outside: `ibsa health` on a fat tree whose cabling has two
# inter-switch links trained below their ends, a partition in ibsmd.yaml naming a GUID the
# fabric does not have, and error counters fabricsim raises on a port:
# - text and --json agree; every check is there; sm and routing are ok (the routing check
#   walked every endpoint to every LID); links warns with the two slow links, as fabricsim
#   verify counts them; errors names the port with its counter; partitions names the GUID;
#   the exit status is 6 (a warning);
# - a fabric where two HCA ports answer with one port GUID: duplicates fails, naming the
#   GUID, and the exit status is 7.
# Usage: ibsmd_health.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
IBSA="$BUILD/cli/ibsa"
FS="$BUILD/test/fabricsim/fabricsim"
health() { "$IBSA" --control "$WORK/control" "$@" health; }

start_fabricsim "fattree:radix=8,levels=2,slow-links=2"
cat >"$WORK/ibsmd.yaml" <<'YAML'
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
SIM_HOST=host-1 start_ibsmd --config "$WORK/ibsmd.yaml"
# errors a port counted before the PM first read it are history, not news: raised after
pm_swept() { [ "$(status_field 's["pm"]["sweeps"]')" -ge 1 ]; }
wait_until 20 pm_swept || fail "the PM did not sweep"
"$FS" ctl errors leaf-3 2 symbol_errors 17 >/dev/null || fail "ctl errors"
errors_seen() { "$IBSA" --control "$WORK/control" --json counters leaf-3 | grep -q '"symbol_errors":17'; }
wait_until 20 errors_seen || fail "the PM did not read leaf-3's errors"

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
assert e["status"] == "warn" and any(i.startswith("leaf-3 ") and "port 2: 17 errors, most symbol_errors (17): check the cable" in i for i in e["items"]), e
p = c["partitions"]
assert p["status"] == "warn" and any("storage (0x0010): member 0x0002c9feedface01" in i for i in p["items"]), p
for name, x in c.items():  # the text says the same
    assert any(l.startswith("%-4s  %s" % (x["status"], name)) for l in text.splitlines()), (name, text)
PY
echo "ibsa health: sm and routing ok ($(grep -o '[0-9]* endpoint-to-LID pairs' "$WORK/health.txt")), 2 slow links, leaf-3's errors, a partition member not in the fabric: warn, exit 6: ok"
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
