#!/bin/bash
# Session 21 call 5: the final code (cfc6058: PWords' marks fields, 8-byte in-kernel partitions).
# The partitioned tests first; in-kernel / in-kernel-all from 8 B, twice; stream-ordered
# partitioned against enqueue and mpi-sync; D D and H H point-to-point with mpi-sync in the same
# call; every gpu test.
budget=${1:-420}
source scripts/device_prologue.sh
for t in partitioned_cuda_np2 partitioned_cuda_direct_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
P=build-gpu/bench/partitioned/mpix_partitioned
for i in 1 2; do
  left && { timeout -k 5 40 "${M[@]}" $P --buffers device --parts 1,8,64 --sizes 8:2048 --modes in-kernel,in-kernel-all --json $out/inkernel$i.json > $out/inkernel$i.txt 2>&1; log "in-kernel $i rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" $P --buffers device --parts 1,64 --sizes 32:2048 --modes partitioned,enqueue,mpi-sync --json $out/stream.json > $out/stream.txt 2>&1; log "stream rc=$?"; }
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 300 -x 30)
for m in enqueue mpi-sync; do
  left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode $m -m 8:4194304 --json $out/dd_$m.json > $out/dd_$m.txt 2>&1; log "dd $m rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "H H" --mode $m -m 8:8 -i 3000 -x 300 --json $out/hh_$m.json > $out/hh_$m.txt 2>&1; log "hh $m rc=$?"; }
done
gpu_tests "partitioned_cuda_np2|partitioned_cuda_direct_np2|jacobi_cuda_partitioned_np2"
