#!/bin/bash
# Session 11 call 4 (8f1812f: GPU-direct on by default, re-used send buffers staged): the halo
# benchmark (crashed in call 3 at 8192) first, one process per size; every gpu test at default
# settings; D D latency (GPU-direct) and bandwidth.
set -u
out=${OUT:?}
budget=${1:-400}
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
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
for n in 64 1024 8192; do
  left && { MPIX_LOG_LEVEL=info MPIX_LOG_SUBSYS=mpi timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --sizes $n --seconds 2 --json $out/halo_$n.json > $out/halo_$n.txt 2>&1; log "halo $n rc=$?"; }
done
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_direct.json > $out/dd_direct.txt 2>&1; log "dd rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 1048576:67108864 -i 10 -x 3 --json $out/bw_direct.json > $out/bw_direct.txt 2>&1; log "bw rc=$?"; }
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 40 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
