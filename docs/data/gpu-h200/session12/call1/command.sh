#!/bin/bash
# Session 12 call 1 (HEAD of session 11): why D D one-way latency at 16 MiB+ and call 4's tables are
# erratic. The whole sweep (buffers re-allocated as sizes grow), then sizes alone (one allocation),
# with mpi logs (a re-used send buffer is staged) and stream debug logs (new bounce buffers),
# MPIX_PROFILE at 16 MiB; bandwidth.
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
cmake --build build-gpu -j 16 --target mpix_latency mpix_bw -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS -x MPIX_PROFILE)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" > $out/$name.txt 2>&1; log "$name rc=$?"; }
name=sweep_info MPIX_LOG_LEVEL=info MPIX_LOG_SUBSYS=mpi lat --buffers "D D" --mode enqueue -m 8:67108864 -i 50 -x 20 --json $out/sweep.json
name=sweep_debug MPIX_LOG_LEVEL=debug MPIX_LOG_SUBSYS=stream,mpi lat --buffers "D D" --mode enqueue -m 1048576:67108864 -i 50 -x 20
for s in 1048576 4194304 16777216 67108864; do
  name=alone_$s lat --buffers "D D" --mode enqueue -m $s:$s -i 50 -x 20 --json $out/alone_$s.json
  name=alone_mpisync_$s lat --buffers "D D" --mode mpi-sync -m $s:$s -i 50 -x 20
done
name=prof_16M MPIX_PROFILE=1 lat --buffers "D D" --mode enqueue -m 16777216:16777216 -i 50 -x 20
name=prof_8B MPIX_PROFILE=1 lat --buffers "D D" --mode enqueue -m 8:8 -i 2000 -x 200
name=hh_8B lat --buffers "H H" --mode enqueue -m 8:8 -i 2000 -x 200
name=dd_8B_mpisync lat --buffers "D D" --mode mpi-sync -m 8:8 -i 2000 -x 200
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 1048576:67108864 -i 10 -x 3 --json $out/bw.json > $out/bw.txt 2>&1; log "bw rc=$?"; }
