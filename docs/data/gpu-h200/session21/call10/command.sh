#!/bin/bash
# Session 21 call 10: mpix's kernels launched through cuLaunchKernel (CudaApi::launch) instead
# of <<<>>>. Host time per call, new against old (old/ = c6fbf64) twice, alternating: the
# in-kernel loop (one partition) and a D D halo-style exchange (mpix_latency exchange-cpu); then
# every gpu test.
budget=${1:-250}
source scripts/device_prologue.sh
(build_old mpix_partitioned mpix_latency) &
for t in partitioned_cuda_direct_np2 gpu_p2p_memop_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
for i in 1 2; do
  for b in gpu old; do
    left && { timeout -k 5 30 "${M[@]}" build-$b/bench/partitioned/mpix_partitioned --buffers device --parts 1 --sizes 8:8 --modes in-kernel,in-kernel-all > $out/part_${b}$i.txt 2>&1; log "part $b $i rc=$?"; }
    left && { timeout -k 5 30 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "D D" --mode exchange-cpu -m 8:8 -i 5000 -x 200 > $out/xcpu_${b}$i.txt 2>&1; log "xcpu $b $i rc=$?"; }
  done
done
gpu_tests "partitioned_cuda_direct_np2|gpu_p2p_memop_np2"
