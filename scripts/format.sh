#!/usr/bin/env bash
# Formats the C, C++ and CUDA sources with clang-format (.clang-format: Google, 100 columns), or
# with --check lists the files that differ and fails (what .ci/run does).
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "format: $cf not found (apt-get install clang-format)"; exit 1; }
# test/catch.hpp is Catch2's single header, vendored as it is. New files git does not track yet
# (and does not ignore) count too, so that they are formatted before they are first committed.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cpp' \
  '*.hpp' '*.cu' '*.hip' | grep -v '^test/catch.hpp$')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then echo "format: $f differs"; bad=1; fi
  done
  [ $bad -eq 0 ] && echo "format: ${#files[@]} files formatted ($("$cf" --version | head -1))"
  exit $bad
fi
"$cf" -i "${files[@]}"
