#!/usr/bin/env bash
# Malformed and awkward SA requests get the right status, and the SA keeps serving.
# Usage: sa_malformed.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

start_fabricsim "fattree:radix=8,levels=2"
SIM_HOST=host-32 start_ibsmd --sweep-interval 0
SIM_HOST=host-1 "$BUILD/test/sa_probe" >"$WORK/probe.out" 2>"$WORK/probe.log" || fail "sa_probe failed"
cat "$WORK/probe.out"
expect() { # CASE STATUS
	grep -q "^$1 $2 " "$WORK/probe.out" || fail "$1: want status $2, got: $(grep "^$1 " "$WORK/probe.out")"
}
expect good-get 0x0000
expect bad-mask 0x0200          # ERR_REQ_INVALID: component mask beyond the record
expect truncated 0x0200         # a record cut short
expect set-node 0x000c          # method/attribute not supported
expect delete-link 0x000c
expect unknown-attr 0x000c
expect service-set-bare 0x0600   # ERR_INSUFFICIENT_COMPONENTS
grep -q '^service-set-bare .* method 0x81 ' "$WORK/probe.out" || fail "an error to a Set must come back as GetResp"
expect service-delete-bare 0x0300
expect bad-version 0x0004       # class version 7
expect get-many 0x0400          # ERR_TOO_MANY_RECORDS
expect get-none 0x0300          # ERR_NO_RECORDS
expect path-insufficient 0x0600 # ERR_REQ_INSUFFICIENT_COMPONENTS
expect path-bad-gid 0x0500      # ERR_REQ_INVALID_GID
expect path-numb127 0x0000
expect sl2vl-set 0x000c
expect sl2vl-get-many 0x0400
expect vlarb-bad-mask 0x0200
expect sl2vl-garbage 0x0000 # a table, empty: no such LID
expect vlarb-garbage 0x0000
expect mcm-join-bare 0x0600           # MGID, PortGID and JoinState are needed
expect mcm-create-insufficient 0x0600 # creating needs Q_Key, P_Key, SL, FlowLabel, TClass
expect mcm-create-nonmember 0x0200    # only a full member creates (o15-0.1.9)
expect mcm-bad-mgid 0x0200
expect mcm-bad-rate 0x0200
expect mcm-leave-unknown 0x0200
expect mcm-getmulti 0x000c
expect mcm-create 0x0000
expect mpr-bare 0x0600
expect mpr-too-many-gids 0x0200
expect mpr-mgid 0x0500
expect mpr-numb127 0x0000
expect mpr-get 0x000c
grep -q "^wrong-sm-key timeout" "$WORK/probe.out" || fail "a request with a wrong SM_Key was answered"
expect good-after 0x0000
kill -0 "$IBSMD_PID" || fail "ibsmd died"
# overload: 400 tables at once to a client that never acknowledges: the SA answers every
# request, the ones beyond the port's share of transfers with NO_RESOURCES, none dropped
SIM_HOST=host-2 "$BUILD/test/sa_probe" --flood 400 >"$WORK/flood.out" 2>>"$WORK/probe.log" || fail "sa_probe --flood"
read -r _ answered refused lost <"$WORK/flood.out"
[ "$lost" = 0 ] && [ "$refused" -gt 0 ] && [ "$answered" -gt 0 ] ||
	fail "400 tables at once: $answered answered, $refused refused, $lost unanswered"
echo "overload: $answered tables under way, $refused refused, none dropped: ok"
SIM_HOST=host-1 "$BUILD/test/sa_probe" >"$WORK/probe2.out" 2>>"$WORK/probe.log" || fail "sa_probe after the flood"
grep -q "^good-after 0x0000" "$WORK/probe2.out" || fail "the SA does not answer after the flood"
grep -q "path-garbage 0x0[0-9a-f]00 " "$WORK/probe.out" || fail "garbage request unanswered"
echo "malformed SA requests: ok"
