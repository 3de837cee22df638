#!/bin/bash
# Session 24 call 2 (same warm machine as call 1): the halo benchmark with device halos, the
# partitioned benchmark, and H H / D D 8 B latency repeated (enqueue / mpi-sync alternating).
budget=${1:-300}
source scripts/device_prologue.sh
for r in 1 2 3; do
  for m in enqueue mpi-sync; do
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 3000 -x 300 --buffers "H H" --mode $m -m 8:8 --json $out/hh_${m}_$r.json > $out/hh_${m}_$r.txt 2>&1; log "hh $m $r rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 3000 -x 300 --buffers "D D" --mode $m -m 8:8 --json $out/dd_${m}_$r.json > $out/dd_${m}_$r.txt 2>&1; log "dd $m $r rc=$?"; }
  done
done
left && { timeout -k 5 120 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned -d cuda --json $out/part.json > $out/part.txt 2>&1; log "partitioned rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_scale --sweep inflight -r 50 --json $out/scale.json > $out/scale.txt 2>&1; log "scale rc=$?"; }
