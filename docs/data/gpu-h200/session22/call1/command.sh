#!/bin/bash
# Session 22 call 1: main at cd3ea9c (session 21's last two commits never ran on a GPU: the
# grouped/single partitioned calls' shared batch code, announce_copied's fence). Every gpu test,
# the partitioned ones first; then the D D baseline for the early-announced GPU-direct sends:
# latency 8 B..4 MiB at the default eager limit and with MPIX_GPU_DIRECT_EAGER_MAX=0, mpi-sync,
# and H H 8 B.
budget=${1:-420}
source scripts/device_prologue.sh
for t in partitioned_cuda_np2 partitioned_cuda_direct_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 300 -x 30)
for r in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode enqueue -m 8:4194304 --json $out/dd_enqueue$r.json > $out/dd_enqueue$r.txt 2>&1; log "dd enqueue $r rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_EAGER_MAX=0 "${L[@]}" --buffers "D D" --mode enqueue -m 8:4194304 --json $out/dd_eager0_$r.json > $out/dd_eager0_$r.txt 2>&1; log "dd eager0 $r rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode mpi-sync -m 8:4194304 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300 --json $out/hh_enqueue.json > $out/hh_enqueue.txt 2>&1; log "hh rc=$?"; }
gpu_tests "partitioned_cuda_np2|partitioned_cuda_direct_np2|jacobi_cuda_partitioned_np2"
