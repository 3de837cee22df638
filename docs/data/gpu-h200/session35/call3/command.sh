#!/bin/bash
# Session 35 call 3: MPIX_Pready_enqueue now makes the send's device marks (call 2: without them
# the direct copy polled the host words, pready-enqueue ~5 us slower than partitioned). The
# partitioned CUDA tests, then mpix_partitioned as in call 2 (two rounds).
budget=200
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # .devdeps (which sets them) not here
source scripts/device_prologue.sh
gpu_tests "^[^p]"  # only partitioned_cuda_np2 and partitioned_cuda_direct_np2
for k in 1 2; do
  timeout -k 5 60 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1 \
    --sizes 16:4194304 --iters 300 --modes pready-enqueue,partitioned,enqueue,mpi-sync \
    --json "$out/partitioned_$k.json" > "$out/partitioned_$k.txt" 2>&1
  log "mpix_partitioned round $k rc=$?"
done
