#!/bin/bash
# Session 17 call 7: the agent's copy kernel takes copies into device memory of up to 1 MiB, cut
# into 64 KiB pieces (a block each); copies into host memory always go to the copy engine (a
# kernel cannot write pageable memory). Old = c27a699 (one block per copy of at most 64 KiB,
# unpacked into old/), new = the tree; alternating: partitioned device buffers at 1, 4 and
# 16 MiB in 8 and 64 partitions, D D bandwidth 64 KiB-4 MiB; then every gpu test of the new build.
budget=${1:-500}
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
    run part_${v}_$rep $b partitioned/mpix_partitioned --buffers device --parts 8,64 --iters 40 --warmup 5 --sizes 1048576:16777216 --modes partitioned
    run bw_${v}_$rep $b mpix_bw -d cuda --buffers "D D" -m 65536:4194304 -i 20 -x 3
  done
done
gpu_tests
gzip -f "$out/ctest_gpu.log"
