#!/bin/bash
# Ran on one H100 (2026-12-06 17:30 UTC). Moved from docs/data/gpu-h200/session32/call4 after: the call got an H100.
# Session 32 call 4: the halo with the application's kernels launched plainly (--device cuda)
# against as programmatic dependents (--device cuda-pdl), mpix's own kernels so in both
# (MPIX_CUDA_PDL=on, the default), deferred triggers, two alternating rounds; first the new gpu
# tests (jacobi with cuda-pdl, checked; the plain-launch variants of three suites).
budget=${1:-150}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
for t in jacobi_cuda_pdl_check_np2 gpu_p2p_plainlaunch_memop_np2 gpu_semantics_plainlaunch_memop_np2 gpu_datatype_plainlaunch_memop_np2; do
  timeout -k 5 120 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_gpu.log 2>&1
  rc=$?; echo "$t rc=$rc" >> $out/ctest_summary.txt; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
for rep in 1 2; do
  for d in cuda cuda-pdl; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device $d --seconds 0.4 --reps 3 --sizes 64,256,1024 --variants classic,mpix,partitioned --json $out/halo_${d}_$rep.json > $out/halo_${d}_$rep.txt 2>&1; log "halo $d $rep rc=$?"; }
  done
done
# An experiment (the working tree only, not committed): H H with each single trigger write as
# mpix's store kernel (a programmatic dependent) instead of a stream memory operation.
H=(-d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8)
for rep in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_memop_$rep.txt 2>&1; log "hh memop $rep rc=$?"; }
  left && { MPIX_EXPERIMENT_KERNEL_WRITES=1 timeout -k 5 60 "${M[@]}" -x MPIX_EXPERIMENT_KERNEL_WRITES build-gpu/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_kwrite_$rep.txt 2>&1; log "hh kernel writes $rep rc=$?"; }
  left && { MPIX_EXPERIMENT_KERNEL_WRITES=1 timeout -k 5 60 "${M[@]}" -x MPIX_EXPERIMENT_KERNEL_WRITES build-gpu/bench/mpix_latency "${H[@]}" --set launch=pdl --mode enqueue > $out/hh_kwrite_app_$rep.txt 2>&1; log "hh kernel writes app $rep rc=$?"; }
done
