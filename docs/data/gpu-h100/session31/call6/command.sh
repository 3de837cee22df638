#!/bin/bash
# Ran on one H100 (2026-12-06 14:31:18 UTC).
# Session 31 call 6: the one-kernel blocking allreduce up to 64 KiB (MPIX_STAGING_FUSE_IN_MAX;
# was 4 KiB in call 4): old (53298a7, old/, with this tree's bench/cuda/gpu_latency.cpp) / new
# (the working tree) / allreduce-sync, 8 B-256 KiB of device doubles, two alternating rounds;
# then the gpu suites that reduce.
budget=${1:-150}
source scripts/device_prologue.sh
build_old mpix_latency
A=(-d cuda --set kernel=write --buffers "D D" -i 1000 -x 100 -m 8:262144)
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${A[@]}" --mode allreduce > $out/allreduce_${b}_$rep.txt 2>&1; log "allreduce $b $rep rc=$?"; }
  done
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${A[@]}" --mode allreduce-sync > $out/allreduce_sync_$rep.txt 2>&1; log "allreduce-sync $rep rc=$?"; }
done
left && { timeout -k 5 120 ctest --test-dir build-gpu -R "allreduce|gpu_p2p|gpu_event|gpu_semantics" --output-on-failure > $out/ctest_allreduce.log 2>&1; log "ctest allreduce/gpu_p2p/gpu_event/gpu_semantics rc=$?"; }
