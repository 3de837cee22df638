#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS, on 9d66aa2.
# Session 37 call 7: the fused-receive kernels after the review's refactor (share_len: how a
# grid's or a receive's blocks meet, written once for wait_then_copy_grid, copy_prefix_grid and
# receive_share; announce_copied takes the number of blocks that copied) -- the gpu tests whose
# receives take those kernels, while time is left.
budget=${1:-200}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
want='^(gpu_(p2p|direct|pipeline|datatype)_(memop|staged_memop|fuseeach_memop|announced_memop|deferred_memop)_np2|jacobi_cuda_check_np2|gpu_chunk_.*)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$want"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
gpu_tests "$want"
log done
