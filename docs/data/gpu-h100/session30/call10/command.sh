#!/bin/bash
# Ran on one H100 (2026-12-06 10:58:26 UTC), from docs/data/gpu-h200/session30/call10 (moved after: the call got an H100).
# Session 30 call 10: call 9 found D D bandwidth at 4-16 MiB 5-9 % lower with the new code, old
# run first in each pair (session 29 call 3 saw the same with old first). The same sizes with the
# order reversed and then kept, three pairs: new first, old first, new first.
# new = the working tree (the final code), old = 8123296 (old/, carried).
budget=${1:-150}
source scripts/device_prologue.sh
build_old mpix_bw
B=(-d cuda --buffers "D D" --mode enqueue -m 1048576:67108864 -i 10 -x 3)
n=0
for order in "gpu old" "old gpu" "gpu old"; do
  n=$((n + 1))
  for b in $order; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_bw "${B[@]}" > $out/bw_dd_${b}_$n.txt 2>&1; log "bw dd $b $n rc=$?"; }
  done
done
