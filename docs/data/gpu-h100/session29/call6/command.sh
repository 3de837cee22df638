#!/bin/bash
# Ran on one H100 (2026-12-06 07:13 UTC).
# Session 29 call 6. new = the working tree: the bounce pool hands out a ready buffer without
# reading pending buffers' stream words (GPU-written: call 5 timed bounce_acquire at 0.25-0.36 us
# on the GPU against 0.07-0.10 on host streams), and staging asks the provider once whether a
# receive may be delivered. old = 0a0ee4c (old3/, carried). Every gpu test; a D D 8 B exchange's
# host time per call, old / new alternating, default and deferred triggers, three rounds.
budget=${1:-230}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
cmake -S old3 -B build-old3 -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old3.log" 2>&1 &&
  cmake --build build-old3 -j "$(nproc)" --target mpix_latency > "$out/build_old3.log" 2>&1
log "old3 built rc=$?"
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2 3; do
  for b in old3 gpu; do
    for c in 1 0; do
      left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer${c}_$rep.txt 2>&1; log "xcpu $b defer=$c $rep rc=$?"; }
    done
  done
done
gpu_tests
