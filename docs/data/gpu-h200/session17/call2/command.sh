#!/bin/bash
# Session 17 call 2: call 1 (partitions of cudaMalloc buffers on a CUDA stream communicator go
# GPU-direct) plus batched copies: the receiver's agent issues the copies of one loop without
# waiting and writes one completion for them (call 1 waited for each copy of at most
# MPIX_AGENT_COPY_SYNC_MAX bytes). The partitioned CUDA test, traced; the device-buffer table,
# GPU-direct (default) against MPIX_GPU_DIRECT=off (staged), 64 KiB added; every other gpu test.
budget=${1:-540}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
export MPIX_GPU_DIRECT=auto
timeout -k 5 120 ctest --test-dir build-gpu -R '^partitioned_cuda_np2$' --output-on-failure > "$out/partitioned_cuda.log" 2>&1
log "partitioned_cuda_np2 rc=$?"
MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi timeout -k 5 120 "${M[@]}" -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS build-gpu/test/partitioned/partitioned_cuda \
  '*cudaMalloc*' > "$out/partitioned_cuda_trace.log" 2>&1
log "traced rc=$? GPU-direct sends: $(grep -c 'GPU-direct send to' "$out/partitioned_cuda_trace.log"), agent copies: $(grep -c 'copied by the agent' "$out/partitioned_cuda_trace.log")"
gzip -f "$out/partitioned_cuda_trace.log"
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 40 --warmup 5)
part() {  # name, sizes, env...
  local name=$1 sizes=$2; shift 2
  left || return
  env "$@" timeout -k 5 100 "${M[@]}" "${P[@]}" --sizes "$sizes" --json "$out/$name.json" > "$out/$name.txt" 2>&1
  log "$name rc=$?"
  [ -s "$out/$name.txt" ] || mps_restart
}
for s in 4096:4096 65536:65536 1048576:1048576 16777216:16777216; do
  tag=${s%%:*}
  part "part_direct_$tag" "$s" MPIX_GPU_DIRECT=auto
  part "part_staged_$tag" "$s" MPIX_GPU_DIRECT=off
done
gpu_tests '^partitioned_cuda_np2$'
gzip -f "$out/ctest_gpu.log"
