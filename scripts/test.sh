#!/usr/bin/env bash
# Runs the test suite (the README's test command; what CI runs): a normal build (build/), then
# the same suite built with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/) and under ThreadSanitizer (build-tsan/), then the host-stream multi-rank suite
# (label mpi) built against MPICH and run with MPICH's launcher (build-mpich/). After the normal
# build, scripts/consumers.sh builds and runs programs against an install of it. GPU tests
# (label gpu) skip, visibly, where no GPU exists.
# Usage: scripts/test.sh [--quick]   (--quick: the normal build and its consumers only)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sources formatted as .clang-format says (Debian's clang-format 14, as on every machine here).
scripts/format.sh --check
# No #include runs back up a layer (docs/guide.md, "the source layers").
scripts/check_layers.sh
# nvcc lives outside PATH on stock CUDA installs. Where it exists the CUDA backend must build:
# the normal build asks for it (ON fails the configuration instead of quietly leaving it out).
cuda=()
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  export PATH="$PATH:/usr/local/cuda/bin"
  cuda=(-DMPIX_ENABLE_CUDA=ON)
fi
jobs=$(nproc)
ctest_args=()
run_suite() {  # dir, extra cmake args... (ctest_args: extra ctest arguments)
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "=== ctest in $dir ${ctest_args[*]} ==="
  ctest --test-dir "$dir" --output-on-failure --timeout 300 "${ctest_args[@]}"
}
# An MPI that has its own MPIX_Stream extension (MPICH 4.1+) must be refused at configuration,
# with a message: simulated by an mpi.h that adds MPICH 4.1's declarations to the real one.
check_refuses_stream_mpi() {
  local d; d=$(mktemp -d /tmp/mpix-stream-mpi.XXXXXX)
  printf '#include_next <mpi.h>\ntypedef struct MPIR_Stream *MPIX_Stream;\n%s\n' \
    'int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream);' >"$d/mpi.h"
  if cmake -S . -B "$d/b" -G Ninja -DCMAKE_C_FLAGS="-I$d" -DMPIX_ENABLE_CUDA=OFF \
      -DMPIX_ENABLE_HIP=OFF -DMPIX_ENABLE_OFI=OFF -DMPIX_BUILD_TESTS=OFF -DMPIX_BUILD_BENCH=OFF \
      -DMPIX_BUILD_EXAMPLES=OFF >"$d/log" 2>&1 ||
     ! tr -s ' \n' ' ' <"$d/log" | grep -q "already has the MPIX_Stream extension"; then
    cat "$d/log"
    echo "=== FAILED: an MPI with its own MPIX_Stream was not refused at configuration ==="
    exit 1
  fi
  rm -rf "$d"
  echo "=== an MPI with its own MPIX_Stream is refused at configuration: ok ==="
}
run_suite build "${cuda[@]}"
echo "=== consumers of an install of build/ ==="
scripts/consumers.sh build
check_refuses_stream_mpi
if [ "${1:-}" != "--quick" ]; then
  # Sanitized builds: host code only (nvcc does not take -fsanitize), benchmarks off.
  san="-DMPIX_ENABLE_CUDA=OFF -DMPIX_BUILD_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++"
  run_suite build-asan $san -DMPIX_SANITIZE=address,undefined
  run_suite build-tsan $san -DMPIX_SANITIZE=thread
  # Any MPI: MPICH (Debian's 4.0, which has no MPIX_Stream of its own) installed beside Open MPI,
  # chosen by its compiler wrappers; host streams only, so no GPU backends, provider ofi,
  # benchmarks or examples.
  if command -v mpicc.mpich >/dev/null; then
    ctest_args=(-L mpi)
    run_suite build-mpich -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
      -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" -DMPIX_ENABLE_CUDA=OFF \
      -DMPIX_ENABLE_HIP=OFF -DMPIX_ENABLE_OFI=OFF -DMPIX_BUILD_BENCH=OFF -DMPIX_BUILD_EXAMPLES=OFF
    ctest_args=()
    # Its install's consumers must find MPICH, not the default MPI.
    echo "=== consumers of an install of build-mpich/ ==="
    scripts/consumers.sh build-mpich
  else
    echo "=== MPICH suite: FAILED: mpicc.mpich not found (apt-get install libmpich-dev mpich) ==="
    exit 1
  fi
fi
echo "all test suites passed"
