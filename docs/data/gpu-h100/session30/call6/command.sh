#!/bin/bash
# Ran on one H100 (2026-12-06 10:18:40 UTC), from docs/data/gpu-h200/session30/call6 with the flag in the tree; the flag was then taken out of the code (relaxed_trigger.patch, beside this file, is what it was).
# Session 30 call 6 (an experiment): what the release of a staged send's fused copy-and-trigger
# kernel costs. build-exp = the working tree with -DMPIX_EXP_RELAXED_TRIGGER (a plain store of the
# trigger: not correct, measured only); build-gpu = the working tree. D D one way 8 B-64 B
# (tiny receives), alternating three times; H H 8 B for scale.
budget=${1:-200}
source scripts/device_prologue.sh
cmake -S . -B build-exp -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-DMPIX_EXP_RELAXED_TRIGGER \
  > $out/configure_exp.log 2>&1 && cmake --build build-exp -j "$(nproc)" --target mpix_latency \
  > $out/build_exp.log 2>&1; log "exp built rc=$?"
L=(-d cuda --set kernel=write --buffers "D D" -i 1000 -x 100 -m 8:64)
for rep in 1 2 3; do
  for b in gpu exp; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 1000 -x 100 -m 8:8 --mode enqueue > $out/hh.txt 2>&1; log "hh rc=$?"; }
