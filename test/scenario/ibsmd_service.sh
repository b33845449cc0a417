#!/usr/bin/env bash
# ibsmd as systemd runs it, checked from outside: started before its port exists it waits
# (--wait-for-port, STATUS says why); a fake NOTIFY_SOCKET (what systemd hands a Type=notify
# service) receives READY=1 only once the subnet is up, STATUS= lines that say
# MASTER and the counts, and WATCHDOG=1 at half WATCHDOG_USEC. SIGHUP with a partition added
# puts its P_Key into the host's port and the switch port facing it (smpquery), without a
# restart (same pid, RELOADING=1 then READY=1); a changed LMC is logged as waiting for a
# restart; a broken file is refused with file:line and changes nothing; SIGTERM saves the
# state and says STOPPING=1.
# Usage: ibsmd_service.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need smpquery

FS="$BUILD/test/fabricsim/fabricsim"
# systemd's side of sd_notify: a datagram socket; each message on one line ("|" for newlines),
# and again with the time it came in notify-times.txt (the daemon's pace, not the script's)
python3 - "$WORK/notify.sock" "$WORK/notify.txt" "$WORK/notify-times.txt" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out, open(sys.argv[3], "a", buffering=1) as times:
    while True:
        m = s.recv(4096).decode().strip().replace("\n", "|")
        out.write(m + "\n")
        times.write(f"{time.time():.3f} {m}\n")
PY
PIDS+=($!)
wait_until 10 test -S "$WORK/notify.sock" || fail "no notify socket"

cat >"$WORK/ibsmd.yaml" <<'YAML'
sweep_interval: 2
partitions:
  - name: tenant-a
    pkey: 0x8001
    members: [0x100001]
YAML
# started before its port exists, as at boot: it waits, saying so, and comes up with it
(cd "$WORK" && SIM_HOST=host-32 NOTIFY_SOCKET="$WORK/notify.sock" WATCHDOG_USEC=400000 \
	exec "$BUILD/daemon/ibsmd" --transport sim --wait-for-port --state-dir "$WORK/state" --control-socket "$WORK/control" \
	--config "$WORK/ibsmd.yaml" >"$WORK/ibsmd.out" 2>"$WORK/ibsmd.log") &
PIDS+=($!)
pid=$!
wait_until 10 grep -q "^STATUS=waiting for the InfiniBand port" "$WORK/notify.txt" ||
	fail "no STATUS while waiting for the port: $(cat "$WORK/notify.txt")"
# it tries again (a second STATUS) rather than give up
waits() { grep -c "^STATUS=waiting for the InfiniBand port" "$WORK/notify.txt" || true; }
waited_twice() { [ "$(waits)" -ge 2 ]; }
wait_until 10 waited_twice || fail "ibsmd did not try its port again: $(cat "$WORK/notify.txt")"
kill -0 "$pid" || fail "ibsmd gave up waiting for its port"
start_fabricsim "fattree:radix=8,levels=2"
wait_until 60 grep -q "^READY=1" "$WORK/notify.txt" || fail "no READY=1: $(cat "$WORK/notify.txt")"
grep -q "subnet up" "$WORK/ibsmd.log" || fail "READY=1 came before the subnet was up"
ready=$(grep -m1 "^READY=1" "$WORK/notify.txt")
grep -q "STATUS=MASTER: 44 nodes (12 switches, 32 CAs)" <<<"$ready" || fail "READY says: $ready"
grep -q "^STATUS=starting" "$WORK/notify.txt" || fail "no STATUS while starting"
# four WATCHDOG=1 after READY=1 within 1.5 s of it, as they came
pings() { awk '/ READY=1/ { r = $1 } r && / WATCHDOG=1$/ { n++ } END { print n + 0 }' "$WORK/notify-times.txt"; }
four_pings() { [ "$(pings)" -ge 4 ]; }
wait_until 10 four_pings || fail "$(pings) WATCHDOG=1 after READY=1"
w=$(awk '/ READY=1/ { r = $1 } r && / WATCHDOG=1$/ && ++n == 4 { printf "%.3f", $1 - r }' "$WORK/notify-times.txt")
awk -v w="$w" 'BEGIN { exit !(w <= 1.5) }' ||
	fail "4 WATCHDOG=1 took $w s at WATCHDOG_USEC=400000 (half: 0.2 s)"
w="4 in $w s"
echo "READY=1 with '${ready#READY=1|STATUS=}', watchdog pings $w: ok"

# the partition reaches the switch without a restart
read -r leaf lport < <("$FS" ctl port host-3 1 | sed -n 's/.* peer "\([^"]*\)" \([0-9]*\).*/\1 \2/p')
llid=$(lid_of "$leaf")
hlid=$(lid_of host-3)
keys() { on_sim host-1 smpquery pkeys "$@" | grep '^ *0:'; }
before=$(keys "$llid" "$lport")
grep -q "0x8002" <<<"$before" && fail "0x8002 before the reload: $before"
cat >>"$WORK/ibsmd.yaml" <<'YAML'
  - name: tenant-b
    pkey: 0x8002
    members: [0x100003, 0x100005]
YAML
: >"$WORK/notify.txt"
kill -HUP "$pid"
both_have() { keys "$llid" "$lport" | has "0x8002" && keys "$hlid" 1 | has "0x8002"; }
wait_until 20 both_have || fail "after SIGHUP $leaf port $lport holds $(keys "$llid" "$lport"), host-3 $(keys "$hlid" 1)"
kill -0 "$pid" || fail "ibsmd is gone after SIGHUP"
grep -q "reload of $WORK/ibsmd.yaml: partitions changed" "$WORK/ibsmd.log" || fail "reload not logged"
grep -q "^RELOADING=1" "$WORK/notify.txt" && grep -q "^READY=1" "$WORK/notify.txt" ||
	fail "no RELOADING=1 then READY=1: $(cat "$WORK/notify.txt")"
echo "SIGHUP: $leaf port $lport now $(keys "$llid" "$lport" | tr -s ' '), same pid: ok"
check_verify 'r["ok"]' >/dev/null || fail "fabricsim verify after the reload"

# what a reload cannot take waits for a restart; a broken file changes nothing
sed -i 's/^sweep_interval: 2/sweep_interval: 2\nlmc: 1/' "$WORK/ibsmd.yaml"
kill -HUP "$pid"
wait_until 10 grep -q "lmc changed in .*takes a restart" "$WORK/ibsmd.log" ||
	fail "a changed lmc is not reported as waiting for a restart"
lmc_of_host3() { "$FS" ctl lids | awk '$4 == "host-3" { print $3 }'; }
lmc3=""
read_lmc3() { lmc3=$(lmc_of_host3) && [ -n "$lmc3" ]; }
wait_until 5 read_lmc3 || true # the simulator may be slow to answer under load: read it again
[ "$lmc3" = 0 ] || fail "LMC changed live: host-3's LMC is '$lmc3'"
cp "$WORK/ibsmd.yaml" "$WORK/good.yaml"
printf 'partitions:\n  - name: x\n    pkey: 0x8003\n    members: whoever\n' >"$WORK/ibsmd.yaml"
kill -HUP "$pid"
wait_until 10 grep -q "reload refused" "$WORK/ibsmd.log" || fail "a broken file is not refused"
grep "reload refused" "$WORK/ibsmd.log" | has "$WORK/ibsmd.yaml:4:14: members" ||
	fail "the refusal does not name file:line:column: $(grep 'reload refused' "$WORK/ibsmd.log")"
# alive past the refusal: it answers on its control socket
status_field 's["state"]' >/dev/null && kill -0 "$pid" || fail "ibsmd died on a broken file"
keys "$llid" "$lport" | has "0x8002" || fail "a refused reload lost partition 0x8002"
echo "lmc waits for a restart; a broken file is refused with file:line:column, nothing lost: ok"

kill -TERM "$pid"
wait_until 10 bash -c "! kill -0 $pid" || fail "ibsmd did not stop on SIGTERM"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc on SIGTERM"
wait_until 5 grep -q "^STOPPING=1" "$WORK/notify.txt" || fail "no STOPPING=1"
[ -s "$WORK/state/guid2lid" ] || fail "no guid2lid after SIGTERM"
echo "SIGTERM: STOPPING=1, state saved, exit 0: ok"
