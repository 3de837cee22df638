#!/bin/bash
# Session 11 call 1: the CUDA IPC remap probe (bench/cuda/probe_ipc_remap.cu), then the GPU-direct
# failures with trace logs of provider mpi: gpu_event (agent copies; hung), gpu_pipeline
# (cudaErrorAlreadyMapped), gpu_p2p (stream copies; hung before fac41df).
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_COPY -x MPIX_LOG_LEVEL
   -x MPIX_LOG_SUBSYS -x MPIX_TEST_WATCHDOG_S)
nvcc -O2 -arch=sm_90 -ccbin mpicxx bench/cuda/probe_ipc_remap.cu -lcuda -o /tmp/remap > "$out/probe_build.log" 2>&1
timeout 30 "${M[@]}" /tmp/remap > "$out/probe_remap.txt" 2>&1; log "probe rc=$?"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
export MPIX_GPU_DIRECT=auto MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi MPIX_TEST_WATCHDOG_S=20
run() {  # name mode test
  MPIX_GPU_DIRECT_COPY=$2 timeout -k 2 25 "${M[@]}" build-gpu/test/gpu/$3 > "$out/$1.txt" 2>&1
  log "$1 rc=$?"
}
run event_agent agent gpu_event
run pipeline_agent agent gpu_pipeline
run p2p_stream stream gpu_p2p
echo quit | nvidia-cuda-mps-control
