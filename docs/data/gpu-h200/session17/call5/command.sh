#!/bin/bash
# Session 17 call 5: the receiver's agent copies GPU-direct messages of at most 64 KiB with one
# kernel per agent loop (a list of pieces in a pinned table) instead of a cudaMemcpyAsync each
# (~4-5 us of the agent's time apiece under MPS: call 4's probe), for every agent-copied
# GPU-direct receive, partitions and p2p alike. Old = 389fd77 (call 2's code, unpacked into old/
# by git archive, built in build-old), new = the tree; alternating: partitioned device buffers
# 1/8/64 partitions at 4 KiB and 1 MiB, D D bandwidth (window 64) and D D latency; then every gpu
# test of the new build.
budget=${1:-540}
source scripts/device_prologue.sh
cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_BUILD_TESTS=OFF -DMPIX_BUILD_EXAMPLES=OFF > "$out/configure-old.log" 2>&1
cmake --build build-old -j "$(nproc)" > "$out/build-old.log" 2>&1; log "old build rc=$?"
run() {  # name, build dir, program args...
  local name=$1 b=$2; shift 2
  left || return
  timeout -k 5 100 "${M[@]}" "$b/bench/$@" --json "$out/$name.json" > "$out/$name.txt" 2>&1
  log "$name rc=$?"
  [ -s "$out/$name.txt" ] || mps_restart
}
for rep in 1 2; do
  for v in new old; do
    b=build-gpu; [ $v = old ] && b=build-old
    run part_${v}_4096_$rep $b partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 40 --warmup 5 --sizes 4096:4096 --modes partitioned
    run part_${v}_1m_$rep $b partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 40 --warmup 5 --sizes 1048576:1048576 --modes partitioned
    run bw_${v}_$rep $b mpix_bw -d cuda --buffers "D D" -m 8192:4194304 -i 20 -x 3
    run lat_${v}_$rep $b mpix_latency -d cuda --set kernel=write --buffers "D D" -m 8:1048576 -i 500 -x 50
  done
done
gpu_tests
gzip -f "$out/ctest_gpu.log"
