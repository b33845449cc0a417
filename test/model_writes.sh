#!/usr/bin/env bash
# Only fabric/ writes the model's links, its GUID indexes, its LIDs and its tables as
# programmed: everyone else goes through fabric/'s mutators (topo_link, topo_unlink,
# topo_forget_links, topo_set_port_guid, topo_assign_lid, topo_release_lid,
# topo_lft_hw_reserve, topo_lft_hw_store, topo_set_pkey_sig), which keep links two-sided,
# indexes right and what a switch holds apart from what the engine wants. A
# textual check over the C files of the other folders: a port's peer, lid, lmc or guid
# assigned, by_guid/by_port_guid put into or deleted from, or lid_port written. Fails
# naming each line. Usage: test/model_writes.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
pat='(ports\[[^]]*\]|\<(port|pt|pp|tp|p)->)\.?(peer|lid|lmc|guid)[[:space:]]*=[^=]'
pat+='|u64map_(put|del)\(&[^,]*(t->|topo\.)by_(port_)?guid'
pat+='|lid_port\[[^]]*\][[:space:]]*=[^=]'
# the tables as programmed: lft_hw (what a switch holds) and a port's P_Key signature
pat+='|\<lft_hw(_size)?(\[[^]]*\])?[[:space:]]*=[^=]|(memcpy|memset|realloc)\([^,]*lft_hw'
pat+='|\<pkey_sig[[:space:]]*=[^=]'
found=$(grep -nE "$pat" sm/*.c sa/*.c sync/*.c routing/*.c pm/*.c cc/*.c daemon/*.c cli/*.c 2>/dev/null |
	grep -v '^\s*//' || true)
if [ -n "$found" ]; then
	echo "model_writes: written outside fabric/ (use fabric/'s mutators):"
	echo "$found"
	exit 1
fi
echo "model_writes: links, GUID indexes, LIDs and programmed tables are written by fabric/ alone"
