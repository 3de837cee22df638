#!/bin/bash
# Session 17 call 8: the final code (the caller tells the backend whether a deferred copy's ends
# are device memory: no pointer query per copy). Every gpu test first; then the partitioned
# device-buffer table and D D bandwidth for the record.
budget=${1:-400}
source scripts/device_prologue.sh
gpu_tests
gzip -f "$out/ctest_gpu.log"
left && timeout -k 5 100 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 \
  --iters 40 --warmup 5 --sizes 4096:16777216 --json "$out/part_table.json" > "$out/part_table.txt" 2>&1
log "part_table rc=$?"
left && timeout -k 5 100 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" -m 8192:67108864 -i 20 -x 3 \
  --json "$out/bw.json" > "$out/bw.txt" 2>&1
log "bw rc=$?"
