#!/bin/bash
# Session 20 call 2: a direct receive's kernels poll device words only once the rounds are known
# to go direct (link word [2]); mpix_partitioned in-kernel prints the host time of each call.
# The partitioned tests; mpix_partitioned new / old (9488bec) / direct off; halo; the gpu tests.
budget=${1:-420}
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
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1 --sizes 16777216 --modes partitioned,enqueue --iters 50 --json $out/part_16m.json > $out/part_16m.txt 2>&1; log "part 16m rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2|jacobi_cuda_partitioned_hosthalos_np2"
