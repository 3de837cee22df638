#!/bin/bash
# Session 18 call 1: every gpu test (the copy kernels' shared run loop; jacobi's partitioned
# variant on device halos), the halo benchmark with device halos in all three variants, and the
# staged path (GPU-direct off) against mpi-sync, D D 8 B-64 MiB.
budget=${1:-520}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
gpu_tests
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 5)
left && { timeout -k 5 120 "${M[@]}" "${H[@]}" --sizes 64,1024,8192 --json $out/halo_p1.json > $out/halo_p1.txt 2>&1; log "halo p1 rc=$?"; }
left && { timeout -k 5 90 "${M[@]}" "${H[@]}" --sizes 64,1024 --partitions 4 --json $out/halo_p4.json > $out/halo_p4.txt 2>&1; log "halo p4 rc=$?"; }
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D" -m 8:67108864 -i 100 -x 10)
for rep in 1 2; do
  left && { MPIX_GPU_DIRECT=off timeout -k 5 90 "${M[@]}" "${L[@]}" --mode enqueue --json $out/dd_staged_$rep.json > $out/dd_staged_$rep.txt 2>&1; log "staged $rep rc=$?"; }
  left && { timeout -k 5 90 "${M[@]}" "${L[@]}" --mode mpi-sync --json $out/dd_mpisync_$rep.json > $out/dd_mpisync_$rep.txt 2>&1; log "mpisync $rep rc=$?"; }
  left && { timeout -k 5 90 "${M[@]}" "${L[@]}" --mode enqueue --json $out/dd_direct_$rep.json > $out/dd_direct_$rep.txt 2>&1; log "direct $rep rc=$?"; }
done
