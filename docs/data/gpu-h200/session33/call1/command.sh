#!/bin/bash
# Session 33 call 1: the copy kernels issue four loads before their stores (copy_strided) and a
# large copy in (copy_prefix_grid) runs on a block per 8 KiB, up to 512, instead of one per
# 16 KiB, up to 1024. old = 622b822 (build-old), new = this tree (build-gpu), alternating:
# GPU-direct D D one way 128 KiB-64 MiB (the default path), the staged path forced
# (MPIX_GPU_DIRECT=off) against mpi-sync, D D bandwidth, 8 B-64 KiB (unchanged path), announced
# sends (new only); then every gpu test.
budget=${1:-330}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw
export MPIX_GPU_DIRECT=auto MPIX_GPU_DIRECT_ANNOUNCE=off
M+=(-x MPIX_GPU_DIRECT -x MPIX_GPU_DIRECT_ANNOUNCE)
bin() { [ "$1" = old ] && echo build-old/bench || echo build-gpu/bench; }
G=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 131072:67108864)
S=(-d cuda --set kernel=write --buffers "D D" -i 100 -x 10 -m 131072:16777216)
P=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:65536)
for rep in 1 2 3; do
  for v in old new; do
    left && { timeout -k 5 90 "${M[@]}" $(bin $v)/mpix_latency "${G[@]}" --mode enqueue > $out/direct_${v}_$rep.txt 2>&1; log "direct $v $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for v in old new; do
    left && { MPIX_GPU_DIRECT=off timeout -k 5 90 "${M[@]}" $(bin $v)/mpix_latency "${S[@]}" --mode enqueue > $out/staged_${v}_$rep.txt 2>&1; log "staged $v $rep rc=$?"; }
  done
  left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_latency "${S[@]}" --mode mpi-sync > $out/mpisync_$rep.txt 2>&1; log "mpi-sync $rep rc=$?"; }
  for v in old new; do
    left && { timeout -k 5 90 "${M[@]}" $(bin $v)/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 8:67108864 -i 10 -x 3 > $out/bw_${v}_$rep.txt 2>&1; log "bw $v $rep rc=$?"; }
  done
done
for v in old new; do
  left && { timeout -k 5 60 "${M[@]}" $(bin $v)/mpix_latency "${P[@]}" --mode enqueue > $out/small_${v}.txt 2>&1; log "small $v rc=$?"; }
done
left && { MPIX_GPU_DIRECT_ANNOUNCE=auto timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_latency "${G[@]}" --mode enqueue > $out/announced_new.txt 2>&1; log "announced rc=$?"; }
budget=$((budget + 210))
gpu_tests
