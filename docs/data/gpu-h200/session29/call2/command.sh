#!/bin/bash
# Ran on one H200 (the H100 kind came back as an H200 for this call), 2026-12-06 06:29 UTC.
# Session 29 call 2. new = the working tree: a staged op's fusion checks use what staging's one
# pointer query found (no kernel_can_access queries of the bounce and user buffers: 2 fewer per
# send, 4 fewer per receive), and a blocking receive a GPU-direct message waits for (above
# MPIX_GPU_DIRECT_EAGER_MAX) writes its trigger before the fused receive kernel, not from it
# (call 1: 0beaee7's fold made 8-64 KiB 0.7-1.4 us slower). old = cd37187 (old/, carried).
# Every gpu test; D D one way old/new alternating three times; a D D exchange's host time per
# call old/new (default and deferred triggers), twice; the GPU-call profile of the new tree;
# halo old/new; H H 8 B.
budget=${1:-330}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_PROFILE)
build_old mpix_latency mpix_halo
gpu_tests
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:131072)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2; do
  for b in old gpu; do
    for c in 0 1; do
      left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer${c}_$rep.txt 2>&1; log "xcpu $b defer=$c $rep rc=$?"; }
    done
  done
done
for c in 0 1; do
  left && { MPIX_PROFILE=1 MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${X[@]}" > $out/xcpu_profile_defer$c.txt 2>&1; log "xcpu profile defer=$c rc=$?"; }
done
for rep in 1 2; do
  for b in old gpu; do
    for c in 0 1; do
      left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix --json $out/halo_${b}_defer${c}_$rep.json > $out/halo_${b}_defer${c}_$rep.txt 2>&1; log "halo $b defer=$c $rep rc=$?"; }
    done
  done
done
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8 --mode enqueue > $out/hh_${b}.txt 2>&1; log "hh $b rc=$?"; }
done
