#!/bin/bash
# Ran on one H100 (2026-12-06 16:59 UTC). Moved from docs/data/gpu-h200/session32/call2 after: the call got an H100.
# Session 32 call 2: programmatic dependent launches of mpix's kernels (MPIX_CUDA_PDL on, the
# default) against plain launches (off), one build, alternating, more rounds than call 1:
# D D one way 8 B-4 KiB (and "app": the benchmark's kernel a programmatic dependent too),
# the allreduce 8 B-64 KiB, a D D exchange's host time (deferred triggers: the Waitall launches
# the kernel), the halo; no regression: mpix_bw D D 8 B-64 MiB, GPU-direct D D 128 KiB-16 MiB.
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_CUDA_PDL -x MPIX_DEFER_TRIGGER)
L=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:4096)
A=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:65536)
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2 3; do
  for p in off on; do
    export MPIX_CUDA_PDL=$p
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${p}_$rep.txt 2>&1; log "dd $p $rep rc=$?"; }
    [ $p = on ] && left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --set launch=pdl --mode enqueue > $out/dd_app_$rep.txt 2>&1; log "dd app $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${A[@]}" --mode allreduce > $out/ar_${p}_$rep.txt 2>&1; log "allreduce $p $rep rc=$?"; }
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${X[@]}" > $out/xcpu_${p}_$rep.txt 2>&1; log "xcpu $p $rep rc=$?"; }
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix --json $out/halo_${p}_$rep.json > $out/halo_${p}_$rep.txt 2>&1; log "halo $p $rep rc=$?"; }
  done
done
D=(-d cuda --set kernel=write --buffers "D D" -i 100 -x 10 -m 131072:16777216)
for rep in 1 2; do
  for p in off on; do
    export MPIX_CUDA_PDL=$p
    left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 8:67108864 -i 10 -x 3 > $out/bw_dd_${p}_$rep.txt 2>&1; log "bw dd $p $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" --mode enqueue > $out/direct_${p}_$rep.txt 2>&1; log "direct $p $rep rc=$?"; }
  done
done
