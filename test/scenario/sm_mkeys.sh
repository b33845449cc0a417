#!/usr/bin/env bash
# M_Keys per port, at protection level 2 (a Get needs the key too), on a 72-host tree:
# - A protects every port with one static key; B, with a site secret and A's key as its
#   static one, takes the subnet after A dies and gives every port its own key, saved 0600;
# - a host that knows one port's key (or the old static key) gets nothing from another;
# - C, started after that with the same secret and nothing in its state directory, sees
#   nothing past its own port: it does not call itself master, B tells it to stand by, it
#   gets B's keys and hops by the sync, and takes over when B dies without one M_Key
#   violation, a LID or a forwarding block changing;
# - C restarted alone finds its way again from its state directory.
# Usage: sm_mkeys.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

FS="$BUILD/test/fabricsim/fabricsim"
start_fabricsim "fattree:radix=12,levels=2,hosts=72" --max-clients 16
need smpquery
need sminfo

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/secret"
chmod 600 "$WORK/secret"
sm() { # NAME HOST PRIORITY [yaml lines]
	local name=$1 host=$2 prio=$3
	shift 3
	start_named_ibsmd "$name" "$host" "$prio" "sweep_interval: 2" "m_key: 0x5eed" \
		"m_key_protect: 2" "$@"
}
keys() { "$FS" ctl mkeys; }
violations() { keys | awk '{ s += $5 } END { print s + 0 }'; }
up_in() { grep -q "subnet up" "$WORK/$1.log"; }
master_at() { [ "$(sm_state_of "$1")" = 3 ]; }

echo "A: one static M_Key on every port"
sm A host-1 10
wait_until 30 up_in A || fail "A did not bring the subnet up"
n=$(keys | wc -l)
[ "$n" = 90 ] || fail "expected 90 endpoints, fabricsim lists $n"
[ "$(keys | awk '$2 == "0x0000000000005eed" && $3 == 2' | wc -l)" = 90 ] ||
	fail "A did not give every port M_Key 0x5eed at protection 2: $(keys | head -3)"
kill -9 "$PID_A"

echo "B: per-port keys from the secret, taking A's ports by A's key"
sm B host-2 5 "m_key_secret: $WORK/secret"
wait_until 60 up_in B || fail "B did not bring the subnet up"
wait_until 20 sh -c "[ \$($FS ctl mkeys | awk '\$2 != \"0x0000000000005eed\"' | wc -l) = 90 ]" ||
	fail "B left ports with A's key: $(keys | grep -c 5eed) of 90"
[ "$(keys | awk '{ print $2 }' | sort -u | wc -l)" = 90 ] || fail "per-port keys are not distinct"
keys | awk '$2 == "0x0000000000000000" || $3 != 2 { bad = 1 } END { exit bad }' ||
	fail "a port without a key or at another protection level"
check_verify 'r["ok"]'
[ "$(stat -c %a "$WORK/state-B/mkeys")" = 600 ] || fail "the mkeys file is not mode 600"
# the file holds exactly the keys the ports carry
diff <(keys | awk '{ print $1, $2 }' | sort) \
	<(awk '/^0x/ { print $1, $2 }' "$WORK/state-B/mkeys" | sort) >/dev/null ||
	fail "state-B/mkeys differs from the keys on the ports"

echo "a host with the old key, or another port's key, learns nothing"
lid10=$(lid_of host-10)
key9=$(keys | awk '$6 == "host-9" { print $2 }')
key10=$(keys | awk '$6 == "host-10" { print $2 }')
if on_sim host-9 smpquery -t 300 -y 0x5eed nodeinfo "$lid10" >/dev/null 2>&1; then
	fail "host-10 answered A's old key"
fi
if on_sim host-9 smpquery -t 300 -y "$key9" nodeinfo "$lid10" >/dev/null 2>&1; then
	fail "host-10 answered host-9's key"
fi
on_sim host-9 smpquery -t 1000 -y "$key10" nodeinfo "$lid10" >/dev/null 2>&1 ||
	fail "host-10 does not answer its own key"

echo "C: started blind, told to stand by, synced"
sm C host-3 1 "m_key_secret: $WORK/secret"
wait_until 30 grep -q "in step with master" "$WORK/C.log" || fail "C never got B's copy"
grep -q "nothing answers behind this SM's own port" "$WORK/C.log" ||
	fail "C was not blind: the test proves nothing"
grep -q "this SM is master" "$WORK/C.log" && fail "C called itself master while blind"
grep -q "telling it to stand by" "$WORK/B.log" || fail "B did not tell C to stand by"
lids_before=$("$FS" ctl lids | sort)
lft_before=$(lft_sets)
# the blind sweep C had under way when told to stand by is abandoned, but its SMPs already
# sent run out their retries with the keys C had then (up to a second; CI once counted one
# after this point): the count is taken once C has none in flight
c_idle() { [ "$(status_field 's["mads"]["inflight"]' "$WORK/control-C")" = 0 ]; }
wait_until 20 c_idle || fail "C's SMPs never ran out: $(status_field 's["mads"]' "$WORK/control-C")"
# and B has swept since, C in step: when B died right after C's full copy, C once took over
# trying a stale key for its own port (a violation)
light_sweeps_pass 1 "$WORK/control-B"
c_in_step() { [ "$(status_field 's["sync"]["in_step"]' "$WORK/control-C")" = True ]; }
wait_until 10 c_in_step || fail "C is not in step with B"
v_before=$(violations)
lidC=$(lid_of host-3)

echo "kill -9 B: C takes the protected subnet"
kill -9 "$PID_B"
t0=$SECONDS
wait_until 10 master_at "$lidC" || fail "C did not become master"
echo "  C is master after $((SECONDS - t0)) s"
wait_until 20 sh -c "[ \$(grep -c 'subnet up' '$WORK/C.log') -ge 1 ]" || fail "C did not bring the subnet up"
check_verify 'r["ok"]'
[ "$("$FS" ctl lids | sort)" = "$lids_before" ] || fail "LIDs changed at C's takeover"
[ "$(lft_sets)" = "$lft_before" ] || fail "C rewrote forwarding blocks"
[ "$(violations)" = "$v_before" ] || fail "C presented wrong M_Keys ($v_before -> $(violations) violations)"
grep -q "nothing answers behind" <(sed -n '/missed .* polls/,$p' "$WORK/C.log") &&
	fail "C was blind at takeover"

echo "C restarted alone: its state directory knows the keys and the way"
kill "$PID_C"
wait "$PID_C" 2>/dev/null || true
v_before=$(violations)
: >"$WORK/C.log"
sm C host-3 1 "m_key_secret: $WORK/secret"
wait_until 30 up_in C || fail "C did not bring the subnet up after its restart"
check_verify 'r["ok"]'
[ "$("$FS" ctl lids | sort)" = "$lids_before" ] || fail "LIDs changed at C's restart"
[ "$(violations)" = "$v_before" ] || fail "C's restart presented wrong M_Keys"
echo "PASS"
