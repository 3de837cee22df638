#!/bin/bash
# Ran on one H100 (2026-12-06 09:48:06 UTC).
# Session 30 call 2. new = the working tree: the bounce pool hands out, from 128 KiB, the buffer
# released last where its stream has passed it (a staged receive's buffer no longer alternates
# with a colder one), and finds size classes by index. old = 8123296 (old/, carried).
# Staged D D one way (GPU-direct off) old/new alternating, 128 KiB-16 MiB, with mpi-sync in each
# round; a D D exchange's host time per call (deferred and default triggers) old/new.
budget=${1:-330}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_DEFER_TRIGGER)
build_old mpix_latency
L=(-d cuda --set kernel=write --buffers "D D" -i 100 -x 10 -m 131072:16777216)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/staged_${b}_$rep.txt 2>&1; log "staged $b $rep rc=$?"; }
  done
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync > $out/mpisync_$rep.txt 2>&1; log "mpi-sync $rep rc=$?"; }
done
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2; do
  for b in old gpu; do
    for c in 0 1; do
      left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer${c}_$rep.txt 2>&1; log "xcpu $b defer=$c $rep rc=$?"; }
    done
  done
done
