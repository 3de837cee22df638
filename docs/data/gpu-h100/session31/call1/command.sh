#!/bin/bash
# Ran on one H100 (2026-12-06 14:15:38 UTC). Moved from docs/data/gpu-h200/session31/call1 after: the call got an H100.
# Session 31 call 1: a small blocking allreduce as one kernel (91aa30a); the agent spinning
# MPIX_SPIN_US when idle before it blocks (the first enqueue of a round no longer wakes it) and
# the Waitall's arrays inline (b150761). new = the working tree, old = 53298a7 (old/, carried).
# Every gpu test (new); a D D exchange's host time (deferred; default once), D D one way
# 8 B-1 KiB, the halo (its reduce step is the allreduce), H H 8 B: old/new alternating.
budget=${1:-420}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_latency mpix_halo
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer1_$rep.txt 2>&1; log "xcpu $b defer=1 $rep rc=$?"; }
  done
done
for b in old gpu; do
  left && { MPIX_DEFER_TRIGGER=0 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer0.txt 2>&1; log "xcpu $b defer=0 rc=$?"; }
done
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix --json $out/halo_${b}_$rep.json > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:1024)
H=(-d cuda --set kernel=write --buffers "H H" -i 1000 -x 100 -m 8:8)
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_${b}_$rep.txt 2>&1; log "hh $b $rep rc=$?"; }
  done
done
gpu_tests
