#!/bin/bash
# Ran on one H100 (2026-12-06 14:20:48 UTC).
# Session 31 call 3: which GPU calls the halo's mpix variant makes per enqueue call (MPIX_PROFILE=1),
# old (53298a7) / new (633bbcc): did the allreduce become one kernel on a CUDA stream?
budget=${1:-150}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_PROFILE)
build_old mpix_halo
for b in gpu old; do
  left && { MPIX_PROFILE=1 MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.3 --reps 1 --sizes 64 --variants mpix > $out/halo_profile_${b}.txt 2>&1; log "halo profile $b rc=$?"; }
done
for b in gpu old; do
  left && { MPIX_PROFILE=1 MPIX_DEFER_TRIGGER=0 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.3 --reps 1 --sizes 64 --variants mpix > $out/halo_profile_${b}_nodefer.txt 2>&1; log "halo profile nodefer $b rc=$?"; }
done
