#!/bin/bash
# Session 18 call 6: the staged path (GPU-direct off), 64 KiB-64 MiB, old (96e8712, as old/) /
# new / mpi-sync, three alternating rounds (call 5's single staged sweep read far slower than
# call 4's); H H 8 B old / new.
budget=${1:-250}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
[ -x build-old/bench/mpix_latency ] || (cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency > "$out/build_old.log" 2>&1)
log "old built rc=$?"
S=(-d cuda --set kernel=write --buffers "D D" -m 65536:67108864 -i 50 -x 5)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${S[@]}" --mode enqueue > $out/staged_${b}_$rep.txt 2>&1; log "staged $b $rep rc=$?"; }
  done
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${S[@]}" --mode mpi-sync > $out/mpisync_$rep.txt 2>&1; log "mpisync $rep rc=$?"; }
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300 > $out/hh_${b}_$rep.txt 2>&1; log "hh $b $rep rc=$?"; }
  done
done
