#!/bin/bash
# Session 10 call 3: GPU-direct copied by the receiving stream's kernel. Direct tests (+ backtraces on a hang),
# D D latency auto vs mpi-sync, bandwidth, then every gpu test alone (default settings) within the budget.
set -u
out=${OUT:?}
budget=${1:-400}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_TEST_WATCHDOG_S)
export MPIX_GPU_DIRECT=auto MPIX_TEST_WATCHDOG_S=25
for t in gpu_direct gpu_event gpu_p2p gpu_semantics gpu_pipeline gpu_datatype; do
  ( timeout -k 2 30 "${M[@]}" build-gpu/test/gpu/$t > $out/d_$t.txt 2>&1; echo "rc=$?" >> $out/d_$t.txt ) &
  for i in $(seq 1 12); do sleep 1; pgrep -x $t > /dev/null || break; done
  if pgrep -x $t > /dev/null; then
    for p in $(pgrep -x $t); do echo "== pid $p"; timeout 8 gdb -batch -p "$p" -ex "thread apply all bt 14" 2>&1 | grep -E "^#|^Thread"; done > $out/d_${t}_bt.txt 2>&1
    pkill -9 -x $t
  fi
  wait; log "direct $t: $(tail -1 $out/d_$t.txt)"
done
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D")
timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 8:67108864 -i 50 -x 5 --json $out/dd_enqueue_auto.json > $out/dd_enqueue_auto.txt 2>&1; log "dd auto rc=$?"
MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" "${L[@]}" --mode mpi-sync -m 8:67108864 -i 50 -x 5 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "mpisync rc=$?"
MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 8:67108864 -i 50 -x 5 --json $out/dd_enqueue_off.json > $out/dd_enqueue_off.txt 2>&1; log "dd off rc=$?"
timeout -k 5 40 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 2 --json $out/bw_auto.json > $out/bw_auto.txt 2>&1; log "bw auto rc=$?"
unset MPIX_GPU_DIRECT MPIX_TEST_WATCHDOG_S
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 30 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
echo quit | nvidia-cuda-mps-control
cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz
