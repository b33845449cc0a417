#!/usr/bin/env bash
# The layer check: a file may include headers of its own layer and the layers below it,
# never above. Layers, lowest first:
#   util <- mad <- config <- fabric <- routing <- import <- sm <- sa <- sync <- pm, cc <- cli,
#   daemon (the binaries)
# import (OpenSM's configuration translated) checks engine names against routing's.
# test/ and bench/ sit above everything. Fails naming each file and include that breaks
# the order. Usage: test/layers.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

rank() {
	case "$1" in
	util) echo 0 ;; mad) echo 1 ;; config) echo 2 ;; fabric) echo 3 ;; routing) echo 4 ;;
	import) echo 5 ;; sm) echo 6 ;; sa) echo 7 ;; sync) echo 8 ;; pm | cc) echo 9 ;;
	cli | daemon) echo 10 ;; *) echo "" ;;
	esac
}

bad=0
checked=0
for dir in util mad config fabric routing import sm sa sync pm cc cli daemon; do
	[ -d "$dir" ] || continue
	own=$(rank "$dir")
	while IFS= read -r f; do
		checked=$((checked + 1))
		while IFS= read -r inc; do
			layer=${inc%%/*}
			r=$(rank "$layer")
			[ -n "$r" ] || continue
			if [ "$r" -gt "$own" ]; then
				echo "layers: $f includes \"$inc\": $layer is above $dir"
				bad=$((bad + 1))
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done < <(find "$dir" -name '*.[ch]' | sort)
done

# each layer's library links only what its includes reach (CMake names follow the folders)
for dir in util mad config fabric routing import sm sa sync pm cc; do
	own=$(rank "$dir")
	[ -f "$dir/CMakeLists.txt" ] || continue
	for lib in $(sed -n 's/.*target_link_libraries(ibsmd_[a-z]* PUBLIC \(.*\))/\1/p' "$dir/CMakeLists.txt"); do
		case "$lib" in ibsmd_*) ;; *) continue ;; esac
		r=$(rank "${lib#ibsmd_}")
		if [ -n "$r" ] && [ "$r" -ge "$own" ]; then
			echo "layers: $dir/CMakeLists.txt links $lib, which is not below $dir"
			bad=$((bad + 1))
		fi
	done
done

if [ "$bad" -ne 0 ]; then
	echo "layers: $bad include(s) or link(s) against the layer order"
	exit 1
fi
echo "layers: $checked files follow util <- mad <- config <- fabric <- routing <- import <- sm <- sa <- sync <- pm, cc <- binaries"
