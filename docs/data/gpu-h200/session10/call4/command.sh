#!/bin/bash
# Session 10 call 4: GPU-direct with agent copies (default) and stream copies: direct suites (backtraces of a hang),
# D D latency (warmup 20 >= the bench's batch of 16), bandwidth, then every gpu test alone (default settings).
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
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_COPY -x MPIX_TEST_WATCHDOG_S -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
export MPIX_GPU_DIRECT=auto MPIX_TEST_WATCHDOG_S=25
dtest() {  # mode test [bt]
  local mode=$1 t=$2 bt=${3:-}
  left || { log "skip $mode $t"; return; }
  ( MPIX_GPU_DIRECT_COPY=$mode timeout -k 2 30 "${M[@]}" build-gpu/test/gpu/$t > $out/d_${mode}_$t.txt 2>&1; echo "rc=$?" >> $out/d_${mode}_$t.txt ) &
  for i in $(seq 1 14); do sleep 1; pgrep -x $t > /dev/null || break; done
  if pgrep -x $t > /dev/null; then
    if [ -n "$bt" ]; then
      for p in $(pgrep -x $t); do echo "== pid $p"; timeout 25 cuda-gdb -batch -p "$p" -ex "thread apply all bt 14" 2>&1 | grep -E "^#|^Thread"; done > $out/d_${mode}_${t}_bt.txt 2>&1
    fi
    pkill -9 -x $t
  fi
  wait; log "direct $mode $t: $(tail -1 $out/d_${mode}_$t.txt)"
}
for t in gpu_direct gpu_p2p gpu_semantics gpu_pipeline gpu_datatype; do dtest agent $t; done
dtest agent gpu_event bt
for t in gpu_direct gpu_event gpu_p2p gpu_pipeline; do dtest stream $t; done
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D")
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" > $out/$name.txt 2>&1; log "$name rc=$?"; }
name=dd_agent MPIX_GPU_DIRECT_COPY=agent lat --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_agent.json
name=dd_stream MPIX_GPU_DIRECT_COPY=stream lat --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_stream.json
name=dd_mpisync MPIX_GPU_DIRECT=off lat --mode mpi-sync -m 8:67108864 -i 50 -x 20 --json $out/dd_mpisync.json
name=dd_off MPIX_GPU_DIRECT=off lat --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/dd_off.json
for mode in stream agent; do
  left && { MPIX_GPU_DIRECT_COPY=$mode timeout -k 5 40 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 1048576:67108864 -i 10 -x 3 --json $out/bw_$mode.json > $out/bw_$mode.txt 2>&1; log "bw $mode rc=$?"; }
done
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
