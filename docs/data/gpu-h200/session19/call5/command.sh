#!/bin/bash
# Session 19 call 5: direct rounds chosen in three messages (the sender confirms once it has
# mapped the receiver's memory), so a receive buffer where an exported one was freed no longer
# keeps the agents' path (call 4: the halo's later repetitions did). The partitioned tests; the
# halo direct / off with the path logged; then every other gpu test.
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { MPIX_LOG_LEVEL=info timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo_direct.json > $out/halo_direct.txt 2>&1; log "halo direct rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 100 "${M[@]}" "${H[@]}" --variants classic,partitioned > $out/halo_off.txt 2>&1; log "halo off rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2"
