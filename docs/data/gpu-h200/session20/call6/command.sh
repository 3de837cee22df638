#!/bin/bash
# Session 20 call 6: the session's final code (two changes of call 5 reverted: call 3's GPU code
# plus device marks that are reused, never freed). Every gpu test, the direct ones first, and
# the small rows of mpix_partitioned.
budget=${1:-330}
source scripts/device_prologue.sh
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
left && { timeout -k 5 40 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --sizes 8:8192 --modes in-kernel,partitioned,enqueue,mpi-sync --json $out/part.json > $out/part.txt 2>&1; log "part rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2|jacobi_cuda_partitioned_np2"
