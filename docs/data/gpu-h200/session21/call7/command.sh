#!/bin/bash
# Session 21 call 7: the new GPU test of direct rounds both ways with MPIX_Startall_enqueue /
# MPIX_Pwaitall_enqueue (partitioned_cuda_direct_np2 and partitioned_cuda_np2), twice each.
budget=${1:-200}
source scripts/device_prologue.sh
for i in 1 2; do
  for t in partitioned_cuda_direct_np2 partitioned_cuda_np2; do
    left && { timeout -k 5 120 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest.log 2>&1; log "$t $i rc=$?"; }
  done
done
