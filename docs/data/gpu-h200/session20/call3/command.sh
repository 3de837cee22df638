#!/bin/bash
# Session 20 call 3: the direct round's copy kernel fences at GPU scope where the copy landed in
# this GPU's memory. mpix_partitioned (partitioned, in-kernel) against the previous commit
# (old/ = 8abe346, system-scope fence) in one call; the same with the kernel
# trigger mode and with every stream memory operation alone (what the stream chain costs);
# then every gpu test.
budget=${1:-420}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL -x MPIX_TRIGGER -x MPIX_MEMOP_BATCH_MIN)
(build_old mpix_partitioned) &
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
P=(--buffers device --parts 1,8,64 --sizes 8:131072 --modes partitioned,in-kernel)
for i in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${P[@]}" --json $out/part_new$i.json > $out/part_new$i.txt 2>&1; log "part new $i rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-old/bench/partitioned/mpix_partitioned "${P[@]}" --json $out/part_old$i.json > $out/part_old$i.txt 2>&1; log "part old $i rc=$?"; }
done
Q=(--buffers device --parts 1 --sizes 8:2048 --modes partitioned,in-kernel,enqueue)
left && { MPIX_TRIGGER=kernel timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part_trigger_kernel.txt 2>&1; log "trigger kernel rc=$?"; }
left && { MPIX_MEMOP_BATCH_MIN=1000 timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part_single_memops.txt 2>&1; log "single memops rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part_default.txt 2>&1; log "default rc=$?"; }
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2"
