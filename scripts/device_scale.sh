#!/bin/bash
# A device call (not run yet: session 8 got no GPU machine): build, every gpu test alone, latency H H / D D (kernel writes),
# pairs on one GPU (with a CUDA_DEVICE_MAX_CONNECTIONS probe), scale sweeps. Results: $OUT/results.tgz
set -u
out=${OUT:?}
budget=${1:-470}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
trap 'echo quit | nvidia-cuda-mps-control' EXIT
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
run() {  # name, np, extra env (or -), program and args
  local name=$1 np=$2 env1=$3; shift 3
  left || { log "skipped $name (budget)"; return; }
  echo "# np=$np $env1 $*" > "$out/$name.txt"
  if [ "$env1" = - ]; then
    timeout -k 5 60 mpirun -np "$np" --bind-to none "${M[@]}" "$@" >> "$out/$name.txt" 2>&1 || log "  $name exited $?"
  else
    timeout -k 5 60 env "$env1" mpirun -np "$np" --bind-to none "${M[@]}" -x "${env1%%=*}" "$@" >> "$out/$name.txt" 2>&1 || log "  $name exited $?"
  fi
}
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
# 1. Latency first (the numbers that matter), three alternating rounds H H.
for r in 1; do
  run hh_enqueue_$r 2 - "${L[@]}" --buffers "H H" --mode enqueue -m 8:4096 -i 3000 -x 300 --json $out/hh_enqueue_$r.json
  run hh_mpisync_$r 2 - "${L[@]}" --buffers "H H" --mode mpi-sync -m 8:4096 -i 3000 -x 300 --json $out/hh_mpisync_$r.json
done
# 4. Every gpu test alone.
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 30 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
  sleep 0.5
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
run dd_enqueue 2 - "${L[@]}" --buffers "D D" --mode enqueue -m 8:65536 -i 300 -x 30 --json $out/dd_enqueue.json
run dd_mpisync 2 - "${L[@]}" --buffers "D D" --mode mpi-sync -m 8:65536 -i 300 -x 30 --json $out/dd_mpisync.json
log "latency done"
# 2. Scale sweeps (host streams).
run scale_inflight 2 - build-gpu/bench/mpix_scale --sweep inflight -r 10 --json $out/scale_inflight.json
run scale_streams 2 - build-gpu/bench/mpix_scale --sweep streams -r 10 --json $out/scale_streams.json
# 3. Pairs on one GPU, and whether more hardware connections per context change them.
for np in 4 8; do
  run hh_enqueue_np$np $np - "${L[@]}" --buffers "H H" --mode enqueue -m 8:64 -i 2000 -x 200 --json $out/hh_enqueue_np$np.json
  run hh_mpisync_np$np $np - "${L[@]}" --buffers "H H" --mode mpi-sync -m 8:64 -i 2000 -x 200 --json $out/hh_mpisync_np$np.json
done
for c in 32; do
  run hh_enqueue_np8_conn$c 8 CUDA_DEVICE_MAX_CONNECTIONS=$c "${L[@]}" --buffers "H H" --mode enqueue -m 8:64 -i 2000 -x 200
  run hh_enqueue_np2_conn$c 2 CUDA_DEVICE_MAX_CONNECTIONS=$c "${L[@]}" --buffers "H H" --mode enqueue -m 8:64 -i 2000 -x 200
done
nvcc -O2 -arch=sm_90 bench/cuda/probe_host_reads.cu -o /tmp/probe_hostread > "$out/probe_build.txt" 2>&1 &&
  timeout 60 /tmp/probe_hostread > "$out/probe_hostread.txt" 2>&1
log "benchmarks done"
(cd "$out" && tar czf results.tgz ./*.json ./*.txt ./*.log 2>/dev/null && rm -f ./*.json ./hh_* ./dd_* ./scale_* ./ctest_gpu.log)
