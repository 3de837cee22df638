#!/bin/bash
# Ran on one H100 (2026-12-06 07:25 UTC).
# Session 29 call 7: issue 12's "staged path no slower than mpi-sync at any size", with today's
# code (last measured in session 18): D D one way with GPU-direct off (MPIX_GPU_DIRECT=off),
# mpi-sync, and the default (GPU-direct), alternating twice, 8 B to 16 MiB.
budget=${1:-100}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
L=(-d cuda --set kernel=write --buffers "D D" -i 100 -x 10 -m 8:16777216)
for rep in 1 2; do
  left && { MPIX_GPU_DIRECT=off timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue > $out/staged_$rep.txt 2>&1; log "staged $rep rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync > $out/mpisync_$rep.txt 2>&1; log "mpi-sync $rep rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue > $out/direct_$rep.txt 2>&1; log "direct $rep rc=$?"; }
done
