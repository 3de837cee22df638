#!/bin/bash
# Session 21 call 2: the device descriptor holds the round's copy (read with its other fields),
# device MPIX_Pready stores the marks before its double-ready check, device MPIX_Parrived reads
# the flag and the arrival together. in-kernel / partitioned new against old (old/ = e726335)
# three times; the partitioned tests first (new misuse case on cudaMalloc buffers); every gpu test.
budget=${1:-400}
source scripts/device_prologue.sh
(build_old mpix_partitioned) &
for t in partitioned_cuda_np2 partitioned_cuda_direct_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
Q=(--buffers device --parts 1,8,64 --sizes 8:2048 --modes in-kernel,partitioned)
for i in 1 2 3; do
  for b in gpu old; do
    left && { timeout -k 5 40 "${M[@]}" build-$b/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part_${b}$i.txt 2>&1; log "part $b $i rc=$?"; }
  done
done
gpu_tests "partitioned_cuda_np2|partitioned_cuda_direct_np2"
