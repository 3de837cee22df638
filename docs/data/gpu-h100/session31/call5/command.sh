#!/bin/bash
# Ran on one H100 (2026-12-06 14:25:46 UTC).
# Session 31 call 5: does the agent's idle spin pay? A D D exchange whose host waits for the
# stream after every exchange (MPIX_BENCH_SYNC_EVERY=1: each round finds the agent idle), and
# every 64 as before; old = 53298a7 (old/, with this tree's bench/cuda/gpu_latency.cpp), new =
# the working tree; deferred triggers; three alternating rounds.
budget=${1:-150}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_BENCH_SYNC_EVERY)
build_old mpix_latency
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 3000 -x 200)
for rep in 1 2 3; do
  for b in old gpu; do
    for k in 1 64; do
      left && { MPIX_BENCH_SYNC_EVERY=$k MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xsync${k}_${b}_$rep.txt 2>&1; log "xcpu sync=$k $b $rep rc=$?"; }
    done
  done
done
