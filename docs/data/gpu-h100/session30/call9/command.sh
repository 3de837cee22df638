#!/bin/bash
# Ran on one H100 (2026-12-06 10:56:39 UTC), from docs/data/gpu-h200/session30/call9 (moved after: the call got an H100).
# Session 30 call 9: no regression elsewhere (issue 14). mpix_bw D D and H H old/new (window 64),
# 8 B-64 MiB, alternating twice; D D one way 128 KiB-16 MiB (GPU-direct, the default) old/new.
# new = the working tree (the final code), old = 8123296 (old/, carried).
budget=${1:-240}
source scripts/device_prologue.sh
build_old mpix_bw mpix_latency
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 8:67108864 -i 10 -x 3 > $out/bw_dd_${b}_$rep.txt 2>&1; log "bw dd $b $rep rc=$?"; }
  done
done
for b in old gpu; do
  left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "H H" --mode enqueue -m 8:4194304 -i 10 -x 3 > $out/bw_hh_${b}.txt 2>&1; log "bw hh $b rc=$?"; }
done
L=(-d cuda --set kernel=write --buffers "D D" -i 100 -x 10 -m 131072:16777216)
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/direct_${b}_$rep.txt 2>&1; log "direct $b $rep rc=$?"; }
  done
done
