#!/bin/bash
# Session 11 call 3 (GPU-direct on by default, stream copies where the wait is next, perf14 merged):
# the stream-aliasing probe; every gpu test at default settings, each alone; agent-copy suites with
# mpix's private streams at the greatest priority (MPIX_EXPERIMENT_PRIVATE_PRIO, not committed);
# D D latency (GPU-direct, staged, mpi-sync), H H 8 B, D D bandwidth, the halo benchmark.
set -u
out=${OUT:?}
budget=${1:-420}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvcc -O2 -arch=sm_90 bench/cuda/probe_stream_alias.cu -lcuda -o /tmp/alias > "$out/probe_build.log" 2>&1
( timeout 10 /tmp/alias; timeout 10 /tmp/alias prio ) > "$out/alias_nomps.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
{ timeout 10 /tmp/alias; timeout 10 /tmp/alias prio; CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 10 /tmp/alias; } > "$out/alias_mps.txt" 2>&1
log "alias probes done"
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
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_COPY -x MPIX_TEST_WATCHDOG_S
   -x MPIX_EXPERIMENT_PRIVATE_PRIO)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" > $out/$name.txt 2>&1; log "$name rc=$?"; }
name=dd_direct lat --buffers "D D" --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_direct.json
name=dd_mpisync lat --buffers "D D" --mode mpi-sync -m 8:67108864 -i 50 -x 20 --json $out/dd_mpisync.json
name=dd_staged MPIX_GPU_DIRECT=off lat --buffers "D D" --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_staged.json
name=hh_enqueue lat --buffers "H H" --mode enqueue -m 8:8 -i 2000 -x 200 --json $out/hh_enqueue.json
name=hh_mpisync lat --buffers "H H" --mode mpi-sync -m 8:8 -i 2000 -x 200 --json $out/hh_mpisync.json
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 1048576:67108864 -i 10 -x 3 --json $out/bw_direct.json > $out/bw_direct.txt 2>&1; log "bw rc=$?"; }
left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --sizes 64,1024,8192 --seconds 2 --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
export MPIX_TEST_WATCHDOG_S=20
for t in gpu_pipeline gpu_event; do
  left || break
  MPIX_GPU_DIRECT_COPY=agent MPIX_EXPERIMENT_PRIVATE_PRIO=1 timeout -k 2 25 "${M[@]}" build-gpu/test/gpu/$t > "$out/agent_prio_$t.txt" 2>&1
  log "agent prio $t rc=$?"
done
