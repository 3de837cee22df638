#!/bin/bash
# On the GPU machine (repository root, .devdeps carried; see ../shared/device/README.md):
# builds with CUDA, runs every gpu-labelled test on its own with a hard time limit (a hung
# multi-rank test cannot eat the device time), then the rest of the suite in parallel.
# Logs go to $OUT. Usage: scripts/device_tests.sh [per-test limit in s, default 100]
set -u
limit=${1:-100}
out=${OUT:?set OUT to the result folder}
source .devdeps/on-device.sh
export CUDA_MODULE_LOADING=EAGER OMPI_MCA_btl_vader_single_copy_mechanism=none
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
{ date -u; nvidia-smi -L; nproc; git log -1 --oneline 2>/dev/null; } > "$out/machine.txt" 2>&1
# One GPU: the two ranks of each test share it, which needs CUDA MPS (without it they
# time-slice the GPU; see ../shared/device/README.md).
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -eq 1 ]; then
  nvidia-cuda-mps-control -d && log "CUDA MPS started (one GPU)"
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
log configure
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
log build
cmake --build build-gpu -j "$(nproc)" -- -k 0 > "$out/build.log" 2>&1 ||
  { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "gpu tests, one at a time, ${limit} s each"
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  timeout "$limit" ctest --test-dir build-gpu -R "^$t\$" --output-on-failure \
    >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" | tee -a "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "the rest of the suite"
timeout 300 ctest --test-dir build-gpu -LE gpu -j 8 --timeout 120 --output-on-failure \
  > "$out/ctest_rest.log" 2>&1
grep -E "tests passed|\(Failed\)|\(Timeout\)" "$out/ctest_rest.log" | head -20
log done
