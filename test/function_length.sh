#!/usr/bin/env bash
# No function longer than 120 lines, counted from its opening brace to its closing one (in
# this project's style both sit in column 0, and only a function's do). A long function is
# many steps in one body: split it into helpers that each do one. Fails naming file:line
# and function for each one over. Usage: test/function_length.sh [SOURCE_DIR [LIMIT]]
#
# Checked: the C sources of every folder but these, left out because
#   test/, bench/  tests and benchmarks: a case reads best whole, in one body
#   build*/        build trees (CMake's own probes)
# No source is generated today; a generated table would be listed here, with its reason.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
limit="${2:-120}"

files=$(find . -path ./.git -prune -o -path './build*' -prune -o -path ./test -prune \
	-o -path ./bench -prune -o -name '*.c' -print | sed 's|^\./||' | sort)
[ -n "$files" ] || {
	echo "function_length: no C sources found under $(pwd)"
	exit 1
}
# shellcheck disable=SC2086
over=$(awk -v limit="$limit" '
	FNR == 1 { start = 0; head = ""; headline = 0 }
	# the signature: the last line before the brace that starts in column 0
	/^[A-Za-z_]/ && !start { head = $0; headline = FNR }
	/^\{/ && !start { start = FNR; next }
	/^\}/ && start {
		n = FNR - start + 1
		if (n > limit) {
			name = head
			sub(/\(.*/, "", name)
			sub(/.*[^A-Za-z0-9_]/, "", name)
			printf "%s:%d %s: %d lines (at most %d)\n", FILENAME, headline, name, n, limit
		}
		start = 0
	}
' $files)
if [ -n "$over" ]; then
	echo "function_length: functions over $limit lines (split each into helpers):"
	echo "$over"
	exit 1
fi
echo "function_length: $(echo "$files" | wc -l) files, no function over $limit lines"
