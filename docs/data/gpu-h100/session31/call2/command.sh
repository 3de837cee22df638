#!/bin/bash
# Ran on one H100 (2026-12-06 14:19:23 UTC).
# Session 31 call 2 (the same warm H100 as call 1): three more alternating rounds of the halo,
# old (53298a7) / new (633bbcc), 64, 256 and 1024 per rank.
budget=${1:-200}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
build_old mpix_halo
for rep in 4 5 6; do
  for b in gpu old; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix --json $out/halo_${b}_$rep.json > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
