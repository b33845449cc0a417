#!/usr/bin/env bash
# OpenSM from Debian brings up fabricsim fabrics through libumad2sim.so, and fabricsim verify
# passes on what it programmed: fat trees of 64, 648 and 5,184 hosts, a 3D torus and a random
# graph (the last two with up/down from a root, as min-hop is not deadlock free there).
# Usage: fabricsim_opensm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
echo 0x0000000000200000 >"$WORK/roots" # the first switch a generator makes

check() { # SPEC [opensm options]
	local spec=$1
	shift
	start_fabricsim "$spec"
	local t0=$SECONDS
	run_opensm "$@"
	local up=$((SECONDS - t0))
	"$FS" verify --json >"$WORK/verify.json" || true
	python3 - "$WORK/verify.json" "$spec" "$up" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
spec, up = sys.argv[2], sys.argv[3]
u = r["unicast"]
assert r["ok"], f"{spec}: verify failed: {r['issues'][:5]}"
assert r["ports"]["active"] == r["ports"]["linked"] > 0, r["ports"]
assert u["unreachable"] == 0 and u["reached"] == u["pairs"] > 0, u
assert not r["credit_loops"]["loop"], r["credit_loops"]
print(f"{spec}: up in {up}s, {u['pairs']} pairs reached, max {u['hops_max']} hops, "
      f"{u['nonminimal']} not minimal, no credit loop")
PY
	stop_sims
}

check "fattree:radix=16,levels=2,hosts=64"
check "fattree:radix=36,levels=2"
check "fattree:radix=36,levels=3,hosts=5184"
check "torus:dims=4x4x4,hosts=2" -R updn -a "$WORK/roots"
check "random:switches=40,radix=16,hosts=200,seed=3" -R updn -a "$WORK/roots"

# min-hop on a fat tree is minimal everywhere
start_fabricsim "fattree:radix=16,levels=2,hosts=64"
run_opensm
"$FS" verify --json | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["unicast"]["nonminimal"]==0, r["unicast"]'
echo "fabricsim under OpenSM: ok"
