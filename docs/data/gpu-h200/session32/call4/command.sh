#!/bin/bash
# Session 32 call 4: the halo with the application's kernels launched plainly (--device cuda)
# against as programmatic dependents (--device cuda-pdl), mpix's own kernels so in both
# (MPIX_CUDA_PDL=on, the default), deferred triggers, three alternating rounds; the new gpu
# tests (jacobi with cuda-pdl, checked; the plain-launch variants of three suites).
budget=${1:-240}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
for rep in 1 2 3; do
  for d in cuda cuda-pdl; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device $d --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix,partitioned --json $out/halo_${d}_$rep.json > $out/halo_${d}_$rep.txt 2>&1; log "halo $d $rep rc=$?"; }
  done
done
for t in jacobi_cuda_pdl_check_np2 gpu_p2p_plainlaunch_memop_np2 gpu_semantics_plainlaunch_memop_np2 gpu_datatype_plainlaunch_memop_np2; do
  timeout -k 5 120 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_gpu.log 2>&1
  rc=$?; echo "$t rc=$rc" >> $out/ctest_summary.txt; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
