#!/bin/bash
# Session 17 call 6: call 5 read D D latency 0.4-0.8 us slower with the new code in both of its
# repetitions, the new build always run first: the same latency sweep with the old build (389fd77,
# unpacked into old/) first, three times; then the new code's whole partitioned table on device
# buffers (4 KiB-16 MiB; 1, 8, 64 partitions; partitioned, enqueue, mpi-sync).
budget=${1:-420}
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
for rep in 1 2 3; do
  for v in old new; do
    b=build-gpu; [ $v = old ] && b=build-old
    run lat_${v}_$rep $b mpix_latency -d cuda --set kernel=write --buffers "D D" -m 8:1048576 -i 500 -x 50
  done
done
run part_table build-gpu partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 40 --warmup 5 --sizes 4096:16777216
