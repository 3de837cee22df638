#!/bin/bash
# Session 20 call 4: the session's code (6706dd1: a direct request's start no longer wakes the
# agent; the private stream asks about its buffers once). The partitioned and jacobi tests;
# mpix_partitioned, full table; host cost per call new / old (old/ = 1b89a1c, the code of
# df2eb9e) in one call; one 16 MiB partition; the halo; every gpu test.
budget=${1:-460}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
(build_old mpix_partitioned) &
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2 jacobi_cuda_partitioned_hosthalos_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
B=build-gpu/bench/partitioned/mpix_partitioned
left && { timeout -k 5 90 "${M[@]}" $B --buffers device --parts 1,8,64 --sizes 8:2097152 --modes partitioned,in-kernel,enqueue,mpi-sync --json $out/part.json > $out/part.txt 2>&1; log "part rc=$?"; }
Q=(--buffers device --parts 1,8 --sizes 8:8192 --modes partitioned,in-kernel)
for i in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" $B "${Q[@]}" > $out/cost_new$i.txt 2>&1; log "cost new $i rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-old/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/cost_old$i.txt 2>&1; log "cost old $i rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" $B --buffers device --parts 1 --sizes 16777216 --modes partitioned,enqueue,mpi-sync --iters 50 --json $out/part_16m.json > $out/part_16m.txt 2>&1; log "part 16m rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2|jacobi_cuda_partitioned_hosthalos_np2"
