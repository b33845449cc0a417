#!/usr/bin/env bash
# An OpenSM master learns of another SM only when a sweep finds it: the heavy sweep a trap 144
# starts when that SM's IsSM goes up. If that sweep's SMInfo question gets no answer (an SM
# not yet in its event loop on a loaded machine; a lost MAD) or no trap comes (an SMA without
# IsCapabilityMaskNoticeSupported, modelled here), OpenSM never hands the subnet to an ibsmd
# of higher priority, which stood by for it for good. The ibsmd standby now tells a master
# that ranks below it of itself by trap 144, as OpenSM's own standbys do.
# Usage: sm_opensm_reminded.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

need opensm
start_fabricsim "fattree:radix=8,levels=2" --max-clients 16
mkdir -p "$WORK/O"
printf 'm_key 0x5eed00005eed0000\nm_key_protection_level 1\n' >"$WORK/O/opensm.conf"
(cd "$WORK/O" && OSM_TMP_DIR="$WORK/O" OSM_CACHE_DIR="$WORK/O" SIM_HOST=host-1 \
	LD_PRELOAD=$PRELOAD exec opensm -p 10 -f "$WORK/O/opensm.log" -d 2 -s 1 \
	-F "$WORK/O/opensm.conf" >"$WORK/O.stdout" 2>&1) &
PIDS+=($!)
wait_until 60 grep -q "SUBNET UP" "$WORK/O/opensm.log" || fail "OpenSM did not bring the subnet up"
# host-3's SMA sends no trap 144 when the SM's IsSM goes up there
"$BUILD/test/fabricsim/fabricsim" ctl cap-notice host-3 off >/dev/null || fail "ctl cap-notice"
start_named_ibsmd A host-3 14 "m_key: 0x5eed00005eed0000" "m_key_protect: 1"
wait_until 30 grep -q "standing by: SM GUID .* is master" "$WORK/A.log" ||
	fail "A does not stand by under OpenSM: $(grep election "$WORK/A.log" | tail -3)"
wait_until 30 grep -q "SMInfo Set HANDOVER" "$WORK/A.log" ||
	fail "OpenSM did not hand over to A (priority 14 over its 10): $(grep election "$WORK/A.log" | tail -3)"
grep -q "telling it of this SM (trap 144)" "$WORK/A.log" || fail "the handover came without A's trap"
wait_until 30 grep -q "subnet up" "$WORK/A.log" || fail "A did not bring the subnet up"
echo "OpenSM, which never saw A's IsSM trap, handed over once A told it of itself"
echo PASS
