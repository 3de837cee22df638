#!/bin/bash
# Session 22 call 7: the final code, announced GPU-direct sends on / off (MPIX_GPU_DIRECT_ANNOUNCE)
# alternating, three times each: D D latency 8 B..4 MiB; then D D bandwidth on / off; halo on / off.
budget=${1:-200}
source scripts/device_prologue.sh
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304 --mode enqueue)
for r in 1 2 3; do
  for a in off auto; do
    left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=$a "${L[@]}" --json $out/dd_$a$r.json > $out/dd_$a$r.txt 2>&1; log "dd $a $r rc=$?"; }
  done
done
for a in off auto; do
  left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=$a build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json $out/bw_$a.json > $out/bw_$a.txt 2>&1; log "bw $a rc=$?"; }
done
for a in off auto; do
  left && { timeout -k 5 90 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=$a build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 1024,8192 --json $out/halo_$a.json > $out/halo_$a.txt 2>&1; log "halo $a rc=$?"; }
done
