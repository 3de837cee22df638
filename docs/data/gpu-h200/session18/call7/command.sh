#!/bin/bash
# Session 18 call 7: the bounce pool hands out the buffer released last again (call 6: taking
# ready buffers before newer freed ones made 2-8 MiB staged ping-pongs 10-25 % slower). The
# staged path, 1-16 MiB, old (96e8712, as old/) / new / mpi-sync, alternating; then gpu tests.
budget=${1:-180}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
[ -x build-old/bench/mpix_latency ] || (cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency > "$out/build_old.log" 2>&1)
log "old built rc=$?"
S=(-d cuda --set kernel=write --buffers "D D" -m 1048576:16777216 -i 50 -x 5)
for rep in 1 2; do
  for b in old gpu; do
    left && { MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${S[@]}" --mode enqueue > $out/staged_${b}_$rep.txt 2>&1; log "staged $b $rep rc=$?"; }
  done
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${S[@]}" --mode mpi-sync > $out/mpisync_$rep.txt 2>&1; log "mpisync $rep rc=$?"; }
done
gpu_tests
