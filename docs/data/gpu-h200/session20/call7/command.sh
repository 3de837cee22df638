#!/bin/bash
# Session 20 call 7: the device MPIX_Parrived of direct rounds without the system fence after a
# true flag (its acquire loads order the data reads). in-kernel / partitioned new against old
# (old/ = 4a9af28, with the fence) twice in one call; the partitioned tests; every gpu test.
budget=${1:-200}
source scripts/device_prologue.sh
(build_old mpix_partitioned) &
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
Q=(--buffers device --parts 1,8 --sizes 8:2048 --modes in-kernel,partitioned)
for i in 1 2; do
  left && { timeout -k 5 30 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/new$i.txt 2>&1; log "new $i rc=$?"; }
  left && { timeout -k 5 30 "${M[@]}" build-old/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/old$i.txt 2>&1; log "old $i rc=$?"; }
done
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2"
