#!/usr/bin/env bash
# Runs the test suite (the README's test command; what CI runs): a normal build (build/), then
# the same suite built with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/) and under ThreadSanitizer (build-tsan/). GPU tests (label gpu) skip, visibly,
# where no GPU exists.
# Usage: scripts/test.sh [--quick]   (--quick: the normal build only)
set -euo pipefail
cd "$(dirname "$0")/.."
# nvcc lives outside PATH on stock CUDA installs; the CUDA backend builds when it is found.
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)
run_suite() {  # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "=== ctest in $dir ==="
  ctest --test-dir "$dir" --output-on-failure --timeout 300
}
run_suite build
if [ "${1:-}" != "--quick" ]; then
  # Sanitized builds: host code only (nvcc does not take -fsanitize), benchmarks off.
  san="-DMPIX_ENABLE_CUDA=OFF -DMPIX_BUILD_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++"
  run_suite build-asan $san -DMPIX_SANITIZE=address,undefined
  run_suite build-tsan $san -DMPIX_SANITIZE=thread
fi
echo "all test suites passed"
