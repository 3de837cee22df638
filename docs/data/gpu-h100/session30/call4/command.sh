#!/bin/bash
# Ran on one H100 (2026-12-06 10:02:52 UTC).
# Session 30 call 4. new = the working tree: a tiny staged receive's message in flagged words
# the fused copy-in kernel polls with the completion word (one PCIe round trip less after it);
# classify by the driver's pointer query; the pool's indexed classes; stagers from a free list.
# old = 8123296 (old/, carried). Every gpu test (new); D D one way old/new alternating three
# times, 8 B-16 KiB; a D D exchange's host time per call old/new (deferred triggers), twice;
# H H 8 B old/new.
budget=${1:-420}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_latency
gpu_tests
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:16384)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer1_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
  done
done
H=(-d cuda --set kernel=write --buffers "H H" -i 1000 -x 100 -m 8:8)
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_${b}.txt 2>&1; log "hh $b rc=$?"; }
done
