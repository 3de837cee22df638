#!/bin/bash
# Session 14 call 2: GPU-direct partitioned rounds (MPIX_PARTITIONED_DIRECT). The partitioned
# CUDA tests first, then every gpu test; then mpix_partitioned on device buffers with the direct
# rounds (auto) and without (off), modes alternating, twice.
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
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
MPIX_LOG_LEVEL=info timeout -k 5 120 "${M[@]}" build-gpu/test/partitioned/partitioned_cuda "[direct]" > $out/direct_test.txt 2>&1
log "direct test rc=$?"; tail -5 $out/direct_test.txt
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
grep -v "rc=0" "$out/ctest_summary.txt"
gzip -f "$out/ctest_gpu.log"
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --modes partitioned,enqueue,mpi-sync --iters 50 --warmup 5)
for rep in 1 2; do
for v in auto off; do
  left && { MPIX_PARTITIONED_DIRECT=$v timeout -k 5 90 "${M[@]}" "${P[@]}" --sizes 4096:16777216 --json $out/part_${v}_$rep.json > $out/part_${v}_$rep.txt 2>&1; log "partitioned device direct=$v rc=$?"; }
done
done
