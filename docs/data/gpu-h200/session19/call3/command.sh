#!/bin/bash
# Session 19 call 3: which path the partitioned table's and the halo's requests take (call 2's
# numbers matched the agents' path), with MPIX_LOG=info; then direct / off alternating.
budget=${1:-300}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG)
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device)
left && { MPIX_LOG=info timeout -k 5 60 "${M[@]}" "${P[@]}" --parts 1 --sizes 32:32 --modes partitioned > $out/part_log.txt 2>&1; log "part log rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 1 --sizes 64 --variants partitioned)
left && { MPIX_LOG=info timeout -k 5 60 "${M[@]}" "${H[@]}" > $out/halo_log.txt 2>&1; log "halo log rc=$?"; }
for rep in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" "${P[@]}" --parts 1,8,64 --sizes 8:16777216 --modes partitioned > $out/part_direct_$rep.txt 2>&1; log "part direct $rep rc=$?"; }
  left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" "${P[@]}" --parts 1,8,64 --sizes 8:16777216 --modes partitioned > $out/part_off_$rep.txt 2>&1; log "part off $rep rc=$?"; }
done
