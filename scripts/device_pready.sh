#!/bin/bash
# A device call (carry .devdeps; one H200, two ranks under CUDA MPS): builds mpix with CUDA, runs
# the partitioned CUDA tests and the gpu suite's partitioned / pipeline tests, then
# bench/mpix_partitioned with 1 and 64 partitions (the device MPIX_Pready's cost per call).
# Results in $OUT: ctest_*.log, pready.txt/.json, steps.log.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export CUDA_MODULE_LOADING=EAGER OMPI_MCA_btl_vader_single_copy_mechanism=none MPIX_YIELD_US=10000000
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
nvidia-cuda-mps-control -d && log "MPS started"
trap 'echo quit | nvidia-cuda-mps-control' EXIT
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || exit 1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E 'partition|pipeline|event'); do
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" | tee -a "$out/ctest_summary.txt"
done
log "tests done"
timeout 120 mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY \
  -x CUDA_MODULE_LOADING -x MPIX_YIELD_US build-gpu/bench/partitioned/mpix_partitioned \
  --sizes 8:16777216 --parts 1,64 --iters 30 --label pready --json "$out/pready.json" \
  > "$out/pready.txt" 2>&1 || log "pready bench exited $?"
log "bench done"
