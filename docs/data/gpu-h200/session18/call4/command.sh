#!/bin/bash
# Session 18 call 4: a large staged receive no longer copies its whole buffer out before its
# trigger (the agent copies only the bytes past a shorter message). Every gpu test; the staged
# path (GPU-direct off) from 64 KiB to 64 MiB, old (96e8712, carried as old/) / new / mpi-sync,
# alternating; where a partitioned round of device buffers spends its time (MPIX_PROFILE=1).
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PROFILE)
[ -x build-old/bench/mpix_latency ] || (cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_old.log" 2>&1)
log "old built rc=$?"
gpu_tests
L=(-d cuda --set kernel=write --buffers "D D" -m 65536:67108864 -i 50 -x 5)
for rep in 1 2; do
  for b in old gpu; do
    left && { MPIX_GPU_DIRECT=off timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/staged_${b}_$rep.json > $out/staged_${b}_$rep.txt 2>&1; log "staged $b $rep rc=$?"; }
  done
  left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync --json $out/mpisync_$rep.json > $out/mpisync_$rep.txt 2>&1; log "mpisync $rep rc=$?"; }
done
left && { MPIX_PROFILE=1 timeout -k 5 90 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1 --sizes 4096:4096 --modes partitioned > $out/part_profile.txt 2>&1; log "part profile rc=$?"; }
