#!/bin/bash
# Session 14 call 1 (main with session 13's backed-out changes restored: the staged receive's
# one-round-trip kernel, trigger stores without a trailing fence, the one-query GPU-direct send,
# and the agent's busy polling MPIX_BUSY_POLL_US). Every gpu test first; then D D 8 B..4 KiB;
# busy polling (default 1000 us) against 0 (a yield per poll, as before) on large H H and staged
# D D; halo 64 and 1024; partitioned device buffers with MPIX_AGENT_COPY_SYNC_MAX 65536 vs 0.
# Modes alternate, twice, in one run.
out=${OUT:?}
budget=${1:-480}
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
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
# The gpu tests first (this session's kernel and pointer-query changes land only if they pass).
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 40 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
gzip -f "$out/ctest_gpu.log"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_BUSY_POLL_US -x MPIX_PROFILE)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { left || return; timeout -k 5 60 "${M[@]}" "${L[@]}" "$@" --json $out/$name.json > $out/$name.txt 2>&1; log "$name rc=$?"; }
S=(-m 8:4096 -i 2000 -x 200)
B=(-m 1048576:67108864 -i 20 -x 5)
for rep in 1 2; do
name=dd_$rep lat --buffers "D D" --mode enqueue "${S[@]}"
name=dd_mpisync_$rep lat --buffers "D D" --mode mpi-sync "${S[@]}"
name=hh_$rep lat --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300
name=hh_mpisync_$rep lat --buffers "H H" --mode mpi-sync -m 8:8 -i 3000 -x 300
name=big_hh_$rep lat --buffers "H H" --mode enqueue "${B[@]}"
name=big_hh_poll0_$rep MPIX_BUSY_POLL_US=0 lat --buffers "H H" --mode enqueue "${B[@]}"
name=big_hh_mpisync_$rep lat --buffers "H H" --mode mpi-sync "${B[@]}"
name=big_staged_$rep MPIX_GPU_DIRECT=off lat --buffers "D D" --mode enqueue "${B[@]}"
name=big_staged_poll0_$rep MPIX_GPU_DIRECT=off MPIX_BUSY_POLL_US=0 lat --buffers "D D" --mode enqueue "${B[@]}"
name=big_dd_mpisync_$rep lat --buffers "D D" --mode mpi-sync "${B[@]}"
done
name=prof_dd8 MPIX_PROFILE=1 lat --buffers "D D" --mode enqueue -m 8:8 -i 3000 -x 300
for n in 64 1024; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --sizes $n --seconds 2 --json $out/halo_$n.json > $out/halo_$n.txt 2>&1; log "halo $n rc=$?"; }
done
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --sizes 2048:1048576 --parts 1,8,64 --modes partitioned,enqueue,mpi-sync --iters 50 --warmup 5)
for v in 65536 0; do
  left && { MPIX_AGENT_COPY_SYNC_MAX=$v timeout -k 5 90 "${M[@]}" -x MPIX_AGENT_COPY_SYNC_MAX "${P[@]}" --json $out/part_dev_sync$v.json > $out/part_dev_sync$v.txt 2>&1; log "partitioned device sync_max=$v rc=$?"; }
done

