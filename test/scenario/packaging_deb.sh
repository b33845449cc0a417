#!/usr/bin/env bash
# The Debian packages, as an administrator gets them: dpkg-buildpackage builds ibsmd, ibsa
# and fabricsim from a copy of the source; lintian finds nothing but what
# packaging/debian/*.lintian-overrides explains; apt accepts the packages (dependencies
# resolve); and from the unpacked ibsmd package: the example configuration passes
# --check-config, every man page renders without a warning, and systemd-analyze verifies
# both units. Nothing is installed on this machine.
# Usage: packaging_deb.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need dpkg-buildpackage
need lintian
need systemd-analyze
SRC=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$WORK/src/ibsmd"
if git -C "$SRC" rev-parse >/dev/null 2>&1; then
	# what a clone holds, with the work tree's changes
	(cd "$SRC" && git ls-files -co --exclude-standard | grep -v '^build' | tar cf - -T -) |
		tar xf - -C "$WORK/src/ibsmd"
else
	(cd "$SRC" && tar cf - --exclude='./build*' .) | tar xf - -C "$WORK/src/ibsmd"
fi
(cd "$WORK/src/ibsmd" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b \
	>"$WORK/build.log" 2>&1) || { tail -30 "$WORK/build.log"; fail "dpkg-buildpackage"; }
cd "$WORK/src"
for p in ibsmd ibsa fabricsim; do
	[ -f "${p}_"*_*.deb ] || fail "no $p package"
done
echo "dpkg-buildpackage: $(ls ./*.deb | grep -vc dbgsym) packages: ok"

lintian --fail-on error,warning ./*.changes >"$WORK/lintian.log" 2>&1 ||
	{ cat "$WORK/lintian.log"; fail "lintian"; }
echo "lintian: nothing unexplained ($(grep -c . "$WORK/lintian.log" || true) lines): ok"

apt-get install --simulate ./ibsmd_*.deb ./ibsa_*.deb ./fabricsim_*.deb >"$WORK/apt.log" 2>&1 ||
	{ cat "$WORK/apt.log"; fail "apt does not accept the packages"; }
grep -q "^Inst ibsmd" "$WORK/apt.log" || fail "apt would not install ibsmd: $(cat "$WORK/apt.log")"
grep -q "^Remv" "$WORK/apt.log" && fail "installing would remove: $(grep '^Remv' "$WORK/apt.log")"
echo "apt would install them, removing nothing: ok"

R="$WORK/root"
for d in ./ibsmd_*.deb ./ibsa_*.deb ./fabricsim_*.deb; do dpkg-deb -x "$d" "$R"; done
[ -x "$R/usr/sbin/ibsmd" ] && [ -x "$R/usr/bin/ibsa" ] && [ -x "$R/usr/bin/fabricsim" ] ||
	fail "binaries missing"
[ -d "$R/var/lib/ibsmd" ] || fail "no state directory"
dpkg-deb -I ./ibsmd_*.deb conffiles | has -x /etc/ibsmd/ibsmd.yaml ||
	fail "/etc/ibsmd/ibsmd.yaml is not a conffile"
"$R/usr/sbin/ibsmd" --check-config "$R/etc/ibsmd/ibsmd.yaml" >/dev/null ||
	fail "the installed example configuration is refused"
for m in man8/ibsmd.8 man5/ibsmd.yaml.5 man1/ibsa.1 man1/fabricsim.1; do
	[ -f "$R/usr/share/man/$m.gz" ] || fail "no $m"
	w=$(man --warnings -l "$R/usr/share/man/$m.gz" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "$m: $w"
done
echo "example configuration passes --check-config; 4 man pages render without a warning: ok"
# the units as installed, but for the binary's path (the package's is not installed here)
mkdir -p "$WORK/units"
for u in ibsmd.service ibsmd@.service; do
	f="$R/lib/systemd/system/$u"
	[ -f "$f" ] || f="$R/usr/lib/systemd/system/$u"
	[ -f "$f" ] || fail "no $u"
	grep -q "^Type=notify" "$f" && grep -q "^WatchdogSec=" "$f" && grep -q "^ExecReload=" "$f" ||
		fail "$u lacks Type=notify, WatchdogSec or ExecReload"
	sed "s|/usr/sbin/ibsmd|$R/usr/sbin/ibsmd|g" "$f" >"$WORK/units/$u"
done
if [ -f /lib/systemd/system/rdma-hw.target ]; then
	systemd-analyze verify --man=no "$WORK/units/ibsmd.service" "$WORK/units/ibsmd@.service" \
		>"$WORK/verify.log" 2>&1 || { cat "$WORK/verify.log"; fail "systemd-analyze verify"; }
	echo "systemd-analyze verify: both units clean: ok"
else
	fail "rdma-core (rdma-hw.target) is not installed: the units need it"
fi
