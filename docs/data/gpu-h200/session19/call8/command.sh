#!/bin/bash
# Session 19 call 8: the final code (a kernel's list of waits made by one helper for the fused
# receive and the direct round's copy): the gpu tests, the direct ones first, while time lasts.
budget=${1:-200}
source scripts/device_prologue.sh
for t in partitioned_cuda_direct_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
gpu_tests "partitioned_cuda_direct_np2|jacobi_cuda_partitioned_np2"
