#!/bin/bash
# Session 12 call 4 (e6e2c62: an in-place allreduce no longer re-staged): every gpu test.
set -u
out=${OUT:?}
budget=${1:-480}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 40 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
gzip -f "$out/ctest_gpu.log"

