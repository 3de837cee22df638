#!/bin/bash
# Session 24 call 3 (a second machine start, the session's last device time): the GPU-direct
# fault tests again, verbose (does the pair go GPU-direct and the fault fire?); the partitioned
# benchmark on device buffers (call 2 passed it wrong flags): 4 KiB, 1 MiB, 16 MiB in 1/8/64
# partitions, default path.
budget=${1:-200}
source scripts/device_prologue.sh
for t in gpu_direct_fault_memop_np2 gpu_direct_fault_announced_memop_np2; do
  left && { timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" -V > $out/$t.log 2>&1; log "$t rc=$? warnings: $(grep -c 'did not go GPU-direct' $out/$t.log)"; }
done
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 40 --warmup 5)
for s in 4096:4096 1048576:1048576 16777216:16777216; do
  left || break
  timeout -k 5 60 "${M[@]}" "${P[@]}" --sizes "$s" --json "$out/part_${s%%:*}.json" > "$out/part_${s%%:*}.txt" 2>&1
  log "part ${s%%:*} rc=$?"
done
