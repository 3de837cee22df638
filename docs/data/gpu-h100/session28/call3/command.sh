#!/bin/bash
# Session 28 call 3 (prepared in session 28; run in session 29 as its call 1, data in session29/call1).
# Which commit made a blocking D D ping-pong of 8-64 KiB 0.2-1.3 us slower (call 2)? old =
# 2c13c18 (old/), b = 0beaee7 (b/: the fused receive kernel writes the trigger before it waits),
# mid = 38037bc (mid/), new = the working tree. Alternating, three times. Carry .devdeps, old,
# mid and b, each made with git archive REV | tar x -C DIR; rm -r DIR/docs (and listed in
# .git/info/exclude). Then the GPU-call profile of a D D exchange (added after call 2).
budget=${1:-150}
source scripts/device_prologue.sh
build_old mpix_latency
for t in b mid; do
  cmake -S $t -B build-$t -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
    -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_$t.log" 2>&1 &&
    cmake --build build-$t -j "$(nproc)" --target mpix_latency > "$out/build_$t.log" 2>&1
  log "$t built rc=$?"
done
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:131072)
for rep in 1 2 3; do
  for t in old b mid gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$t/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${t}_$rep.txt 2>&1; log "dd $t $rep rc=$?"; }
  done
done
# Where a D D exchange's host time goes: MPIX_PROFILE's GPU-call lines (the driver's share of
# each enqueue call), default and deferred triggers.
for c in 0 1; do
  left && { MPIX_PROFILE=1 MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" -x MPIX_PROFILE -x MPIX_DEFER_TRIGGER build-gpu/bench/mpix_latency -d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200 > $out/xcpu_profile_defer$c.txt 2>&1; log "xcpu profile defer=$c rc=$?"; }
done
