#!/bin/bash
# Session 10 call 1: build; GPU-direct D D latency sweep (auto vs off vs mpi-sync) + profile; hang backtraces; IPC floor.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_PROFILE -x MPIX_LOG_LEVEL)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D")
export MPIX_LOG_LEVEL=info
for gd in auto off; do
  MPIX_GPU_DIRECT=$gd timeout -k 5 90 "${M[@]}" "${L[@]}" --mode enqueue -m 8:67108864 -i 100 -x 10 --json $out/dd_enqueue_$gd.json > $out/dd_enqueue_$gd.txt 2>&1; log "dd $gd rc=$?"
done
MPIX_GPU_DIRECT=off timeout -k 5 90 "${M[@]}" "${L[@]}" --mode mpi-sync -m 8:67108864 -i 100 -x 10 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "mpisync rc=$?"
MPIX_PROFILE=1 MPIX_GPU_DIRECT=auto timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 4194304:4194304 -i 100 -x 10 > $out/dd_prof_4m.txt 2>&1; log "prof rc=$?"
MPIX_PROFILE=1 MPIX_GPU_DIRECT=auto timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 65536:65536 -i 100 -x 10 > $out/dd_prof_64k.txt 2>&1; log "prof rc=$?"
unset MPIX_PROFILE
for t in gpu_direct gpu_p2p gpu_semantics; do
  MPIX_GPU_DIRECT=auto timeout -k 5 60 "${M[@]}" build-gpu/test/gpu/$t > $out/t_$t.txt 2>&1; log "$t auto rc=$?"
done
nvcc -O2 -arch=sm_90 -ccbin mpicxx tmp/ipc_pingpong.cu -o /tmp/ipcpp -lcuda > $out/ipcpp_build.txt 2>&1
[ -x /tmp/ipcpp ] && timeout 60 mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING /tmp/ipcpp > $out/ipcpp.txt 2>&1
log "ipcpp rc=$?"
echo quit | nvidia-cuda-mps-control; sleep 1
bash scripts/device_gpu_direct.sh
cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz
