#!/bin/bash
# Session 19 call 7: a direct round's copy of at most 64 KiB with at most 3 partitions is one
# kernel that waits, copies and marks arrival (call 6: three stream calls on the private stream
# and a done write), and the sender's stream waits for the arrival mark. The partitioned and
# jacobi tests; the partitioned table and the halo, direct / off; then the other gpu tests.
budget=${1:-440}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2 jacobi_cuda_partitioned_hosthalos_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --sizes 8:2097152)
left && { timeout -k 5 60 "${M[@]}" "${P[@]}" --json $out/part_direct.json > $out/part_direct.txt 2>&1; log "part direct rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned > $out/part_off.txt 2>&1; log "part off rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo_direct.json > $out/halo_direct.txt 2>&1; log "halo direct rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 100 "${M[@]}" "${H[@]}" --variants classic,partitioned > $out/halo_off.txt 2>&1; log "halo off rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2|jacobi_cuda_partitioned_hosthalos_np2"
