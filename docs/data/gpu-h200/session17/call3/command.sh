#!/bin/bash
# Session 17 call 3: the GPU-direct rendezvous tests all its sends' and answers' requests with one
# MPI_Testsome per agent loop (before: one MPI_Testall / MPI_Test per message, each a progress
# call of Open MPI). Old = 389fd77 (call 2's code, unpacked into old/ by git archive, built in
# build-old), new = the tree; alternating: partitioned device buffers 1/8/64 partitions at 4 KiB
# and 1 MiB, and D D bandwidth (window 64); then every gpu test of the new build.
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
  done
done
gpu_tests
gzip -f "$out/ctest_gpu.log"
