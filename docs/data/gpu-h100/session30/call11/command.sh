#!/bin/bash
# Ran on one H100 (2026-12-06 11:00:19 UTC), from docs/data/gpu-h200/session30/call11 (moved after: the call got an H100).
# Session 30 call 11: the halo with the final code, more rounds (calls 5 and 7 were within their
# spread): mpix_halo --device cuda, classic and mpix (deferred triggers), 64² (512 B halos: tiny
# receives), 256² (2 KiB) and 1024², old/new alternating three times.
# new = the working tree (the final code), old = 8123296 (old/, carried).
budget=${1:-200}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_halo
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix --json $out/halo_${b}_$rep.json > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
