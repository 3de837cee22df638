#!/bin/bash
# Ran on one H100 (2026-12-06 10:42:22 UTC), from docs/data/gpu-h200/session30/call8 (moved after: the call got an H100).
# Session 30 call 8: the final code (the block allocator's thread-local pointer, the tiny words'
# writer as in call 7). new = the working tree, old = 8123296 (old/, carried). Every gpu test
# (new); D D one way old/new alternating three times, 8 B-4 KiB, and mpi-sync; a D D
# exchange's host time old/new (deferred and default), twice; H H 8 B old/new.
budget=${1:-400}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_latency
gpu_tests
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:4096)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2; do
  for b in old gpu; do
    for c in 1 0; do
      left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer${c}_$rep.txt 2>&1; log "xcpu $b defer=$c $rep rc=$?"; }
    done
  done
done
H=(-d cuda --set kernel=write --buffers "H H" -i 1000 -x 100 -m 8:8)
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_${b}.txt 2>&1; log "hh $b rc=$?"; }
done
