#!/bin/bash
# Session 13 call 2: bench/cuda/probe_chain.cu (stream time of one staged hop per way of copying)
# without and under MPS; big H H / staged sizes with the agent never yielding (MPIX_SPIN_US).
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvcc -O2 -arch=sm_90 bench/cuda/probe_chain.cu -o /tmp/probe_chain -lcuda > $out/nvcc.log 2>&1; log "nvcc rc=$?"
timeout 60 /tmp/probe_chain 3000 > $out/chain_nomps.txt 2>&1; log "chain no MPS rc=$?"
nvidia-cuda-mps-control -d && log "MPS started"
timeout 60 /tmp/probe_chain 3000 > $out/chain_mps.txt 2>&1; log "chain MPS rc=$?"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_SPIN_US -x MPIX_PROFILE)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" --json $out/$name.json > $out/$name.txt 2>&1; log "$name rc=$?"; }
B=(-m 1048576:16777216 -i 20 -x 5)
for rep in 1 2; do
name=big_hh_$rep lat --buffers "H H" --mode enqueue "${B[@]}"
name=big_hh_spin_$rep MPIX_SPIN_US=10000000 lat --buffers "H H" --mode enqueue "${B[@]}"
name=big_hh_mpisync_$rep lat --buffers "H H" --mode mpi-sync "${B[@]}"
done
log "done"
