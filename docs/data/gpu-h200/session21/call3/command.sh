#!/bin/bash
# Session 21 call 3: device MPIX_Pready issues a release fence (fence.release.gpu) before it
# reads the descriptor, in place of the acq_rel fence after. probe_fences (release fences
# added); partitioned new against old (old/ = e351a78) on device buffers twice and on pinned
# host buffers once; the partitioned tests; the halo benchmark (new).
budget=${1:-300}
source scripts/device_prologue.sh
(build_old mpix_partitioned) &
nvcc -O2 -arch=sm_90 -o $out/probe_fences bench/cuda/probe_fences.cu && $out/probe_fences > $out/probe_fences.txt 2>&1
log "probe rc=$?"; rm -f $out/probe_fences
for t in partitioned_cuda_np2 partitioned_cuda_direct_np2; do
  left && { timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1; log "$t rc=$?"; }
done
wait
Q=(--parts 1,8,64 --sizes 8:2048 --modes in-kernel,partitioned)
for i in 1 2; do
  for b in gpu old; do
    left && { timeout -k 5 40 "${M[@]}" build-$b/bench/partitioned/mpix_partitioned "${Q[@]}" --buffers device > $out/part_${b}$i.txt 2>&1; log "part $b $i rc=$?"; }
  done
done
for b in gpu old; do
  left && { timeout -k 5 40 "${M[@]}" build-$b/bench/partitioned/mpix_partitioned --parts 1,8,64 --sizes 8:2048 --modes partitioned --buffers host > $out/parthost_${b}.txt 2>&1; log "part host $b rc=$?"; }
done
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 90 "${M[@]}" "${H[@]}" --json $out/halo.json > $out/halo.txt 2>&1; log "halo rc=$?"; }
