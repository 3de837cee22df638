#!/bin/bash
# Session 21 call 4: MPIX_Startall_enqueue / MPIX_Pwaitall_enqueue (one stream call for a
# side's receive and send). mpix_partitioned in-kernel against in-kernel-all, one binary, twice;
# the halo benchmark (its partitioned variant now starts and waits with them) new against old
# (old/ = 151a825) twice, alternating; every gpu test.
budget=${1:-420}
source scripts/device_prologue.sh
(build_old mpix_halo) &
for t in partitioned_cuda_np2 partitioned_cuda_direct_np2 jacobi_cuda_partitioned_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
Q=(--buffers device --parts 1,8 --sizes 32:2048 --modes in-kernel,in-kernel-all)
for i in 1 2; do
  left && { timeout -k 5 40 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part$i.txt 2>&1; log "part $i rc=$?"; }
done
wait
H=(--device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
for i in 1 2; do
  for b in gpu old; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo "${H[@]}" --json $out/halo_${b}$i.json > $out/halo_${b}$i.txt 2>&1; log "halo $b $i rc=$?"; }
  done
done
gpu_tests "partitioned_cuda_np2|partitioned_cuda_direct_np2|jacobi_cuda_partitioned_np2"
