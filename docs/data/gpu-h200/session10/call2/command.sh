#!/bin/bash
# Session 10 call 2: copy_prefix grid fix; GPU-direct D D sweep vs mpi-sync; gpu_direct test; gpu_event hang backtraces; IPC floor.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
body() {
{ date -u; nvidia-smi -L; command -v gdb cuda-gdb; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_PROFILE -x MPIX_LOG_LEVEL -x MPIX_TEST_WATCHDOG_S -x MPIX_LOG_SUBSYS)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D")
export MPIX_LOG_LEVEL=info
MPIX_GPU_DIRECT=auto timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 8:67108864 -i 50 -x 5 --json $out/dd_enqueue_auto.json > $out/dd_enqueue_auto.txt 2>&1; log "dd auto rc=$?"
MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" "${L[@]}" --mode mpi-sync -m 8:67108864 -i 50 -x 5 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "mpisync rc=$?"
MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 65536:67108864 -i 50 -x 5 --json $out/dd_enqueue_off.json > $out/dd_enqueue_off.txt 2>&1; log "dd off rc=$?"
MPIX_GPU_DIRECT=auto MPIX_TEST_WATCHDOG_S=30 timeout -k 5 40 "${M[@]}" build-gpu/test/gpu/gpu_direct > $out/t_gpu_direct.txt 2>&1; log "gpu_direct rc=$?"
dbg=$(command -v gdb || command -v cuda-gdb || true)
( MPIX_GPU_DIRECT=auto MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi MPIX_TEST_WATCHDOG_S=40 timeout -k 3 45 "${M[@]}" build-gpu/test/gpu/gpu_event > $out/gd_gpu_event.log 2>&1; echo "rc=$?" >> $out/gd_gpu_event.log ) &
sleep 15
for p in $(pgrep -f "build-gpu/test/gpu/gpu_event\$"); do
  echo "== pid $p"; [ -n "$dbg" ] && timeout 12 "$dbg" -batch -p "$p" -ex "thread apply all bt 20" 2>&1 | grep -E "^#|^Thread"
done > $out/gd_gpu_event_bt.txt 2>&1
wait; log "gpu_event: $(tail -1 $out/gd_gpu_event.log)"
nvcc -O2 -arch=sm_90 -ccbin mpicxx tmp/ipc_pingpong.cu -o /tmp/ipcpp -lcuda > $out/ipcpp_build.txt 2>&1
timeout 30 mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING /tmp/ipcpp > $out/ipcpp.txt 2>&1; log "ipcpp rc=$?"
}
timeout -k 5 ${1:-380} bash -c "$(declare -f log body); out=$out; $(declare -p OMPI_MCA_btl_vader_single_copy_mechanism CUDA_MODULE_LOADING | sed 's/declare -x/export/'); body"
echo quit | nvidia-cuda-mps-control
cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz
