#!/bin/bash
# Session 11 call 2: the stream-aliasing probe (bench/cuda/probe_stream_alias.cu) without MPS and
# under MPS (default / high-priority streams / CUDA_DEVICE_MAX_CONNECTIONS=32 or 1); the
# GPU-direct suites with MPIX_GPU_DIRECT=auto (stream copies where the wait is next, the new
# default) and agent copies; every gpu test with MPIX_GPU_DIRECT=auto; D D latency.
set -u
out=${OUT:?}
budget=${1:-420}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvcc -O2 -arch=sm_90 bench/cuda/probe_stream_alias.cu -lcuda -o /tmp/alias > "$out/probe_build.log" 2>&1
( timeout 20 /tmp/alias; timeout 20 /tmp/alias prio ) > "$out/alias_nomps.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
{ timeout 20 /tmp/alias; timeout 20 /tmp/alias prio; CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 20 /tmp/alias;
  CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 20 /tmp/alias; } > "$out/alias_mps.txt" 2>&1
log "alias probes done"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_COPY -x MPIX_LOG_LEVEL
   -x MPIX_LOG_SUBSYS -x MPIX_TEST_WATCHDOG_S -x CUDA_DEVICE_MAX_CONNECTIONS)
export MPIX_GPU_DIRECT=auto MPIX_TEST_WATCHDOG_S=20
run() {  # name copy-mode test
  left || { log "skip $1"; return; }
  MPIX_GPU_DIRECT_COPY=$2 timeout -k 2 30 "${M[@]}" build-gpu/test/gpu/$3 > "$out/$1.txt" 2>&1
  log "$1 rc=$?"
}
for t in gpu_direct gpu_p2p gpu_semantics gpu_pipeline gpu_datatype gpu_event; do run d_stream_$t stream $t; done
run d_agent_gpu_pipeline agent gpu_pipeline
CUDA_DEVICE_MAX_CONNECTIONS=32 run d_agent_conn32_gpu_event agent gpu_event
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D")
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" > $out/$name.txt 2>&1; log "$name rc=$?"; }
name=dd_stream lat --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_stream.json
name=dd_mpisync MPIX_GPU_DIRECT=off lat --mode mpi-sync -m 8:67108864 -i 50 -x 20 --json $out/dd_mpisync.json
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/auto_summary.txt"; continue; }
  timeout -k 5 30 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/auto_ctest.log" 2>&1
  echo "$t rc=$?" >> "$out/auto_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "auto gpu tests: $(grep -c 'rc=0' "$out/auto_summary.txt") of $(grep -c . "$out/auto_summary.txt") passed"
echo quit | nvidia-cuda-mps-control
cd $out && tar czf /tmp/r.tgz auto_ctest.log && rm -f auto_ctest.log && mv /tmp/r.tgz auto_ctest.tgz
