#!/bin/bash
# Session 13 call 1 (at fe18d94, no code change since session 12): where the D D small-message
# time goes. 8 B..4 KiB ping-pong per variant in one run: staged (default below the eager max),
# GPU-direct at every size (MPIX_GPU_DIRECT_EAGER_MAX=0), staged with the wait and the copy in
# apart (MPIX_STAGING_FUSE_IN_MAX=0), mpi-sync; H H with and without the write kernel; profiles;
# nsys GPU trace of D D 8 B where nsys exists; the staged path's large sizes with profiles;
# halo 64 default / eager 0.
set -u
out=${OUT:?}
budget=${1:-400}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; which nsys ncu; ls /usr/local/cuda/bin | head -50; nproc; lscpu | grep -i numa; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_EAGER_MAX
   -x MPIX_STAGING_FUSE_IN_MAX -x MPIX_STAGING_CHUNK -x MPIX_PROFILE)
L=(build-gpu/bench/mpix_latency -d cuda)
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" --json $out/$name.json > $out/$name.txt 2>&1; log "$name rc=$?"; }
S=(-m 8:4096 -i 2000 -x 200)
for rep in 1 2; do
name=dd_default_$rep lat --set kernel=write --buffers "D D" --mode enqueue "${S[@]}"
name=dd_eager0_$rep MPIX_GPU_DIRECT_EAGER_MAX=0 lat --set kernel=write --buffers "D D" --mode enqueue "${S[@]}"
name=dd_fusein0_$rep MPIX_STAGING_FUSE_IN_MAX=0 lat --set kernel=write --buffers "D D" --mode enqueue "${S[@]}"
name=dd_mpisync_$rep lat --set kernel=write --buffers "D D" --mode mpi-sync "${S[@]}"
name=hh_write_$rep lat --set kernel=write --buffers "H H" --mode enqueue -m 8:8 -i 2000 -x 200
name=hh_empty_$rep lat --buffers "H H" --mode enqueue -m 8:8 -i 2000 -x 200
name=hh_mpisync_$rep lat --set kernel=write --buffers "H H" --mode mpi-sync -m 8:8 -i 2000 -x 200
done
name=prof_dd8 MPIX_PROFILE=1 lat --set kernel=write --buffers "D D" --mode enqueue -m 8:8 -i 2000 -x 200
name=prof_dd8_eager0 MPIX_GPU_DIRECT_EAGER_MAX=0 MPIX_PROFILE=1 lat --set kernel=write --buffers "D D" --mode enqueue -m 8:8 -i 2000 -x 200
name=prof_hh8 MPIX_PROFILE=1 lat --set kernel=write --buffers "H H" --mode enqueue -m 8:8 -i 2000 -x 200
if command -v nsys > /dev/null && left; then
  timeout -k 5 90 nsys profile -o $out/dd8 -t cuda --force-overwrite true "${M[@]}" "${L[@]}" --set kernel=write --buffers "D D" --mode enqueue -m 8:8 -i 300 -x 50 > $out/nsys_run.txt 2>&1
  log "nsys rc=$?"
  ls $out >> $out/nsys_run.txt
fi
B=(-m 1048576:67108864 -i 20 -x 5)
name=big_staged MPIX_GPU_DIRECT=off lat --set kernel=write --buffers "D D" --mode enqueue "${B[@]}"
name=big_mpisync lat --set kernel=write --buffers "D D" --mode mpi-sync "${B[@]}"
name=big_staged_chunk1M MPIX_GPU_DIRECT=off MPIX_STAGING_CHUNK=1048576 lat --set kernel=write --buffers "D D" --mode enqueue "${B[@]}"
name=big_hh lat --set kernel=write --buffers "H H" --mode enqueue "${B[@]}"
name=big_hh_mpisync lat --set kernel=write --buffers "H H" --mode mpi-sync "${B[@]}"
name=prof_staged4M MPIX_GPU_DIRECT=off MPIX_PROFILE=1 lat --set kernel=write --buffers "D D" --mode enqueue -m 4194304:4194304 -i 20 -x 5
name=prof_staged64M MPIX_GPU_DIRECT=off MPIX_PROFILE=1 lat --set kernel=write --buffers "D D" --mode enqueue -m 67108864:67108864 -i 10 -x 3
for v in default eager0; do
  e=4096; [ $v = eager0 ] && e=0
  left && { MPIX_GPU_DIRECT_EAGER_MAX=$e timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --sizes 64 --seconds 2 --json $out/halo64_$v.json > $out/halo64_$v.txt 2>&1; log "halo $v rc=$?"; }
done
log "done"
