#!/usr/bin/env bash
# The RPM spec, built here with rpmbuild from a tarball of the source as a distribution
# would (Debian's rpm lacks Fedora's macro packages, so the spec uses plain cmake and
# guards the systemd scriptlet macros): the three packages come out, the unit tests pass in
# %check, and ibsmd's holds the daemon, both units, the configuration as a noreplace
# conffile, the state directory (0700) and both man pages.
# Usage: packaging_rpm.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need rpmbuild
SRC=$(cd "$(dirname "$0")/../.." && pwd)
V=$(sed -n 's/^Version: *//p' "$SRC/packaging/rpm/ibsmd.spec")
mkdir -p "$WORK/top/SOURCES" "$WORK/tree/ibsmd-$V"
if git -C "$SRC" rev-parse >/dev/null 2>&1; then
	(cd "$SRC" && git ls-files -co --exclude-standard | grep -v '^build' | tar cf - -T -) |
		tar xf - -C "$WORK/tree/ibsmd-$V"
else
	(cd "$SRC" && tar cf - --exclude='./build*' .) | tar xf - -C "$WORK/tree/ibsmd-$V"
fi
tar czf "$WORK/top/SOURCES/ibsmd-$V.tar.gz" -C "$WORK/tree" "ibsmd-$V"
rpmbuild --define "_topdir $WORK/top" --define "_smp_mflags -j$(nproc)" --nodeps -bb \
	"$SRC/packaging/rpm/ibsmd.spec" >"$WORK/rpmbuild.log" 2>&1 ||
	{ tail -30 "$WORK/rpmbuild.log"; fail "rpmbuild"; }
grep -q "100% tests passed" "$WORK/rpmbuild.log" || fail "%check did not run the unit tests"
R=$(ls "$WORK"/top/RPMS/*/ibsmd-"$V"-*.rpm)
for p in ibsa fabricsim; do
	ls "$WORK"/top/RPMS/*/"$p-$V"-*.rpm >/dev/null || fail "no $p package"
done
rpm -qlp "$R" >"$WORK/files"
for f in /usr/sbin/ibsmd /etc/ibsmd/ibsmd.yaml /usr/lib/systemd/system/ibsmd.service \
	/usr/lib/systemd/system/ibsmd@.service /var/lib/ibsmd /usr/share/man/man8/ibsmd.8 \
	/usr/share/man/man5/ibsmd.yaml.5; do
	grep -qx "$f\(.gz\)\?" "$WORK/files" || fail "$f is not in the ibsmd package"
done
rpm -qp --configfiles "$R" | has -x /etc/ibsmd/ibsmd.yaml || fail "the configuration is not a config file"
rpm -qp --dump "$R" | awk '$1 == "/var/lib/ibsmd" { print $5 }' | has '0700$' ||
	fail "/var/lib/ibsmd is not 0700: $(rpm -qp --dump "$R" | grep /var/lib/ibsmd)"
if rpm -qp --scripts "$R" | has '%systemd'; then fail "unexpanded systemd macros in the scriptlets"; fi
echo "rpmbuild: ibsmd, ibsa and fabricsim; unit tests in %check; ibsmd's files and modes: ok"
