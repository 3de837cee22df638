#!/bin/bash
# Session 20 call 1: direct partitioned rounds wait for the send's device marks (one array in the
# GPU's memory, polled side by side by the copy kernel's threads), a device MPIX_Pready on a
# cudaMalloc buffer fences at GPU scope, rounds over 64 KiB copy with the copy engine after a
# waiting kernel. The partitioned tests; mpix_partitioned (new modes in-kernel) against the
# previous commit's build (old/, 9488bec) in one call; one 16 MiB partition; the halo; the rest.
budget=${1:-480}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
(build_old mpix_partitioned) &
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2 jacobi_cuda_partitioned_hosthalos_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
P=(--buffers device --parts 1,8,64 --sizes 8:2097152)
left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${P[@]}" --modes partitioned,in-kernel,enqueue,mpi-sync --json $out/part_new.json > $out/part_new.txt 2>&1; log "part new rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-old/bench/partitioned/mpix_partitioned "${P[@]}" --modes partitioned --json $out/part_old.json > $out/part_old.txt 2>&1; log "part old rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8 --sizes 8:8192 --modes in-kernel,partitioned > $out/part_off.txt 2>&1; log "part off rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1 --sizes 16777216 --modes partitioned,in-kernel,enqueue,mpi-sync --iters 50 --json $out/part_16m.json > $out/part_16m.txt 2>&1; log "part 16m rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2|jacobi_cuda_partitioned_hosthalos_np2"
