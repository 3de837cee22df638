#!/bin/bash
# Session 28 call 2: is call 1's D D ping-pong (new 2-5 us slower than old at every size, one
# run each) real? Three trees alternating three times: old = 2c13c18 (old/), mid = 38037bc
# (mid/: session 27's head), new = the working tree (mid + the recycled generalized requests).
# Then host cost as ops in flight grow (mpix_scale, host streams) mid / new, and H H 8 B.
budget=${1:-240}
source scripts/device_prologue.sh
build_old mpix_latency mpix_scale
cmake -S mid -B build-mid -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_mid.log" 2>&1 &&
  cmake --build build-mid -j "$(nproc)" --target mpix_latency mpix_scale > "$out/build_mid.log" 2>&1
log "mid built rc=$?"
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:4194304)
for rep in 1 2 3; do
  for b in old mid gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_${b}_$rep.json > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in mid gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_scale --sweep inflight -r 50 --json $out/scale_${b}_$rep.json > $out/scale_${b}_$rep.txt 2>&1; log "scale $b $rep rc=$?"; }
  done
done
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8 --mode enqueue > $out/hh_${b}_$rep.txt 2>&1; log "hh $b $rep rc=$?"; }
  done
done
