#!/bin/bash
# Ran on one H200 (2026-12-06 10:27:13 UTC), from docs/data/gpu-h100/session30/call7 (moved after: the call got an H200).
# Session 30 call 7. new = the working tree: tiny receives up to 1016 bytes (the block polls),
# a flag per receive instead of zeroed words. old = 8123296 (old/, carried).
# Every gpu test (new); D D one way old/new alternating three times, 8 B-4 KiB, and mpi-sync; a
# D D exchange's host time old/new (deferred), twice; halo (64², 1024²) old/new, deferred, twice.
budget=${1:-400}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_latency mpix_halo
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
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer1_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix --json $out/halo_${b}_$rep.json > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
