#!/usr/bin/env bash
# control_group as the packaged unit runs it: the units' CapabilityBoundingSet holds CAP_CHOWN
# (what giving the socket to a group root is not in takes) and nothing else, and their
# runtime directory is searchable. Without CAP_CHOWN (setpriv drops it, as an empty bounding
# set did) ibsmd warns, naming the group and the error, keeps the socket 0600 and never
# claims 0660 to the group; a member of the group is refused. With it, the socket and the
# directory ibsmd made for it belong to the group, and a member (nobody, in nogroup) gets
# the status.
# Usage: ibsmd_control_group.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need setpriv
IBSA="$BUILD/cli/ibsa"
GROUP=nogroup
getent group "$GROUP" >/dev/null || fail "no group $GROUP"
id -nG nobody | has -w "$GROUP" || fail "nobody is not in $GROUP"

# the units: the code calls chown() for control_group, so CAP_CHOWN, and only it
grep -q 'chown(c->path' "$SCENARIO_DIR/../../daemon/control.c" || fail "control.c no longer chowns"
for u in ibsmd.service.in ibsmd@.service.in; do
	f="$SCENARIO_DIR/../../packaging/systemd/$u"
	grep -qx 'CapabilityBoundingSet=CAP_CHOWN' "$f" ||
		fail "$u: $(grep CapabilityBoundingSet "$f") (control_group needs CAP_CHOWN, nothing else)"
	grep -qx 'RuntimeDirectoryMode=0755' "$f" ||
		fail "$u: $(grep RuntimeDirectoryMode "$f") (control_group's members must reach the socket)"
done
echo "units: CapabilityBoundingSet=CAP_CHOWN, RuntimeDirectoryMode=0755: ok"

start_fabricsim "fattree:radix=4,levels=2"
chmod 755 "$WORK" # nobody must reach what ibsmd makes inside
run() { # NAME SETPRIV-ARGS...: ibsmd with control_group, its socket in a directory it makes
	local name=$1
	shift
	printf 'control_group: %s\nsweep_interval: 0\n' "$GROUP" >"$WORK/$name.yaml"
	(cd "$WORK" && SIM_HOST=host-1 exec setpriv "$@" -- "$BUILD/daemon/ibsmd" --transport sim \
		--log-level info --state-dir "$WORK/state-$name" --config "$WORK/$name.yaml" \
		--control-socket "$WORK/run-$name/control" >"$WORK/$name.out" 2>"$WORK/$name.log") &
	PIDS+=($!)
	eval "PID_$name=$!"
	wait_until 60 grep -q "subnet up" "$WORK/$name.log" || fail "$name: no subnet up"
	wait_until 10 test -S "$WORK/run-$name/control" || fail "$name: no control socket"
}
as_member() { setpriv --reuid=65534 --regid=65534 --init-groups "$IBSA" --control "$1" status; }

# without CAP_CHOWN: warned, root only, the group not claimed
run nocap --bounding-set=-chown
grep -q "warn control: control_group \"$GROUP\": cannot give .* (Operation not permitted)" \
	"$WORK/nocap.log" || fail "no warning naming the group and the error: $(grep control "$WORK/nocap.log")"
grep -q "0660" "$WORK/nocap.log" && fail "the log claims the socket is 0660: $(grep 0660 "$WORK/nocap.log")"
grep -q "control socket .*(mode 0600, root only)" "$WORK/nocap.log" ||
	fail "the log does not say root only: $(grep control "$WORK/nocap.log")"
[ "$(stat -c %a "$WORK/run-nocap/control")" = 600 ] || fail "socket mode $(stat -c %a "$WORK/run-nocap/control")"
"$IBSA" --control "$WORK/run-nocap/control" status >/dev/null || fail "root is refused"
rc=0
as_member "$WORK/run-nocap/control" >/dev/null 2>"$WORK/err" || rc=$?
[ "$rc" = 3 ] || fail "a member got in without CAP_CHOWN: rc $rc $(cat "$WORK/err")"
stop_pids "$PID_nocap"
echo "without CAP_CHOWN: a warning naming $GROUP, the socket 0600 and said so, a member refused: ok"

# with it: the socket and its directory belong to the group, a member gets in
run cap --bounding-set=+chown
grep -q "control socket .*(mode 0660, root and group $GROUP)" "$WORK/cap.log" ||
	fail "the log does not name the group: $(grep control "$WORK/cap.log")"
grep -q "warn control" "$WORK/cap.log" && fail "a warning with CAP_CHOWN: $(grep 'warn control' "$WORK/cap.log")"
[ "$(stat -c '%a %G' "$WORK/run-cap/control")" = "660 $GROUP" ] ||
	fail "socket $(stat -c '%a %G' "$WORK/run-cap/control")"
as_member "$WORK/run-cap/control" | has "^state: *MASTER" || fail "a member of $GROUP is refused"
echo "with CAP_CHOWN: socket 0660 to $GROUP, and a member reads the status: ok"
