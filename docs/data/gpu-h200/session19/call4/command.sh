#!/bin/bash
# Session 19 call 4: direct rounds copy small rounds with one kernel that also marks arrival
# (call 3: the copy engine); the partitioned tests; the partitioned table direct / off; which
# path the halo's partitioned requests take (MPIX_LOG_LEVEL=info).
budget=${1:-300}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --sizes 8:2097152)
left && { timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned,enqueue,mpi-sync > $out/part_direct_1.txt 2>&1; log "part direct 1 rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned > $out/part_off_1.txt 2>&1; log "part off 1 rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned > $out/part_direct_2.txt 2>&1; log "part direct 2 rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned > $out/part_off_2.txt 2>&1; log "part off 2 rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 1 --sizes 64,1024 --variants classic,partitioned)
left && { MPIX_LOG_LEVEL=info timeout -k 5 60 "${M[@]}" "${H[@]}" > $out/halo_log.txt 2>&1; log "halo log rc=$?"; }
