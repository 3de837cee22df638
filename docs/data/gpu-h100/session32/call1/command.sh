#!/bin/bash
# Ran on one H100 (2026-12-06 16:42 UTC). Moved from docs/data/gpu-h200/session32/call1 after: the call got an H100.
# Session 32 call 1: mpix's kernels launched as programmatic dependents of the kernel before them
# (MPIX_CUDA_PDL=on, the new default) against plain launches (off), in one build, alternating.
# D D one way 8 B-1 KiB (and with the benchmark's kernel a programmatic dependent too:
# --set launch=pdl, "app"); H H 8 B with memop and kernel triggers; the halo (deferred triggers);
# the allreduce; then every gpu test with PDL on.
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_CUDA_PDL -x MPIX_DEFER_TRIGGER)
L=(-d cuda --set kernel=write --buffers "D D" -i 1000 -x 100 -m 8:1024)
H=(-d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8)
A=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:32768)
for rep in 1 2 3; do
  for p in off on; do
    export MPIX_CUDA_PDL=$p
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${p}_$rep.txt 2>&1; log "dd $p $rep rc=$?"; }
    [ $p = on ] && left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --set launch=pdl --mode enqueue > $out/dd_app_$rep.txt 2>&1; log "dd app $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" --mode enqueue-kernel > $out/hhk_${p}_$rep.txt 2>&1; log "hh kernel $p $rep rc=$?"; }
    [ $p = on ] && left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" --set launch=pdl --mode enqueue-kernel > $out/hhk_app_$rep.txt 2>&1; log "hh kernel app $rep rc=$?"; }
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix --json $out/halo_${p}_$rep.json > $out/halo_${p}_$rep.txt 2>&1; log "halo $p $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for p in off on; do
    export MPIX_CUDA_PDL=$p
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${A[@]}" --mode allreduce > $out/ar_${p}_$rep.txt 2>&1; log "allreduce $p $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_${p}_$rep.txt 2>&1; log "hh memop $p $rep rc=$?"; }
  done
done
export MPIX_CUDA_PDL=on
gpu_tests
