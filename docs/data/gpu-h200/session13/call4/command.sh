#!/bin/bash
# Session 13 call 4: call 3's probe says that under MPS a chain of spinning/storing kernels turns
# around faster than stream memory operations (6.0 against 7.6-8.6 us). The real ping-pong with
# mpix_trigger=kernel (mode enqueue-kernel) against memop (enqueue), H H and D D, GPU-direct at
# every size too, with profiles; in one run, twice.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT_EAGER_MAX -x MPIX_PROFILE)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" --json $out/$name.json > $out/$name.txt 2>&1; log "$name rc=$?"; }
S=(-m 8:4096 -i 2000 -x 200)
for rep in 1 2; do
name=hh_memop_$rep lat --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300
name=hh_kernel_$rep lat --buffers "H H" --mode enqueue-kernel -m 8:8 -i 3000 -x 300
name=hh_mpisync_$rep lat --buffers "H H" --mode mpi-sync -m 8:8 -i 3000 -x 300
name=dd_memop_$rep lat --buffers "D D" --mode enqueue "${S[@]}"
name=dd_kernel_$rep lat --buffers "D D" --mode enqueue-kernel "${S[@]}"
name=dd_kernel_eager0_$rep MPIX_GPU_DIRECT_EAGER_MAX=0 lat --buffers "D D" --mode enqueue-kernel "${S[@]}"
name=dd_mpisync_$rep lat --buffers "D D" --mode mpi-sync "${S[@]}"
done
name=prof_hh_kernel MPIX_PROFILE=1 lat --buffers "H H" --mode enqueue-kernel -m 8:8 -i 3000 -x 300
name=prof_dd_kernel MPIX_PROFILE=1 lat --buffers "D D" --mode enqueue-kernel -m 8:8 -i 3000 -x 300
name=prof_dd_kernel_eager0 MPIX_GPU_DIRECT_EAGER_MAX=0 MPIX_PROFILE=1 lat --buffers "D D" --mode enqueue-kernel -m 8:8 -i 3000 -x 300
log "done"
