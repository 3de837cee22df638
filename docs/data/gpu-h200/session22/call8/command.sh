#!/bin/bash
# Session 22 call 8: announced sends whose receive is not its stream's next wait when that wait
# is queued go to the agent at once (call 7: a window was copied by the stream one receive per
# agent loop). Announced test variants; D D bandwidth and latency, announcements off / on.
budget=${1:-120}
source scripts/device_prologue.sh
for t in gpu_direct_announced_memop_np2 gpu_p2p_announced_memop_np2 gpu_pipeline_announced_memop_np2; do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
for a in off auto; do
  left && { timeout -k 5 40 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=$a build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json $out/bw_$a.json > $out/bw_$a.txt 2>&1; log "bw $a rc=$?"; }
done
for a in off auto; do
  left && { timeout -k 5 40 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=$a build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304 --mode enqueue --json $out/dd_$a.json > $out/dd_$a.txt 2>&1; log "dd $a rc=$?"; }
done
