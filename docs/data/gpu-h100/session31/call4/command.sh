#!/bin/bash
# Ran on one H100 (2026-12-06 14:22:14 UTC).
# Session 31 call 4: a blocking MPIX_Allreduce_enqueue of device doubles, one kernel (new, the
# working tree) against a copy kernel, a stream wait and a copy (old = 53298a7, old/, with this
# tree's bench/cuda/gpu_latency.cpp copied in for its new allreduce modes); MPI_SUM of 1-512
# doubles, the kernel writing each rank's input first; time per iteration and the call's host
# time, three alternating rounds; the host-synchronised code (allreduce-sync) as the baseline.
budget=${1:-200}
source scripts/device_prologue.sh
build_old mpix_latency
A=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:4096)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${A[@]}" --mode allreduce > $out/allreduce_${b}_$rep.txt 2>&1; log "allreduce $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${A[@]}" --mode allreduce-sync > $out/allreduce_sync_$rep.txt 2>&1; log "allreduce-sync $rep rc=$?"; }
done
left && { timeout -k 5 120 ctest --test-dir build-gpu -R "allreduce|gpu_p2p|gpu_event" --output-on-failure > $out/ctest_allreduce.log 2>&1; log "ctest allreduce/gpu_p2p/gpu_event rc=$?"; }
