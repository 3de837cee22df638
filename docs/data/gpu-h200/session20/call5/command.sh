#!/bin/bash
# Session 20 call 5: call 4 hung (a freed request's device marks were freed with cudaFree on the
# agent thread while the next configuration's kernel spun); marks are now reused, never freed.
# The direct tests; in-kernel as a process's first exchange (its kernel spins while the agent maps
# the peer's buffer); mpix_partitioned full table; host cost per call new / old (old/ = 1b89a1c,
# the code of df2eb9e); one 16 MiB partition; the halo; every gpu test.
budget=${1:-420}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
(build_old mpix_partitioned) &
for t in partitioned_cuda_direct_np2 partitioned_cuda_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
B=build-gpu/bench/partitioned/mpix_partitioned
run() { local name=$1 lim=$2; shift 2; left || return; timeout -k 5 $lim "${M[@]}" "$@" > $out/$name.txt 2>&1; local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart; }
run first 40 $B --buffers device --parts 1 --sizes 32:32 --modes in-kernel,partitioned
run part 90 $B --buffers device --parts 1,8,64 --sizes 8:2097152 --modes partitioned,in-kernel,enqueue,mpi-sync --json $out/part.json
Q=(--buffers device --parts 1,8 --sizes 8:8192 --modes partitioned,in-kernel)
run cost_new 40 $B "${Q[@]}"
run cost_old 40 build-old/bench/partitioned/mpix_partitioned "${Q[@]}"
run part_16m 40 $B --buffers device --parts 1 --sizes 16777216 --modes partitioned,enqueue,mpi-sync --iters 50 --json $out/part_16m.json
run halo 100 build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192 --json $out/halo.json
gpu_tests "partitioned_cuda_direct_np2|partitioned_cuda_np2"
