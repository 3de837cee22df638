#!/bin/bash
# Session 33 call 2: GPU-direct sends announced by default, per peer (MPIX_GPU_DIRECT_ANNOUNCE=auto:
# until the peer's agent copies one, then 16, 32, ... 4096 unannounced), and the copy-in grid at
# 16 KiB a block, up to 256 (four loads in flight a thread). old = a725d9e (build-old: 8 KiB a
# block up to 512, announcements off by default), new = this tree (build-gpu) with
# MPIX_GPU_DIRECT_ANNOUNCE=off and with the default (auto), alternating: D D one way
# 128 KiB-64 MiB and 8 B-64 KiB, D D bandwidth (window 64: the receives the agent copies), the
# halo (deferred triggers, as in session 32); then every gpu test.
budget=${1:-200}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw mpix_halo
M+=(-x MPIX_GPU_DIRECT_ANNOUNCE -x MPIX_DEFER_TRIGGER)
run() {  # run NAME VARIANT(old|off|auto) CMD...
  local name=$1 v=$2; shift 2
  local b=build-gpu/bench; [ $v = old ] && b=build-old/bench
  local a=$v; [ $v = old ] && a=off
  left && { MPIX_DEFER_TRIGGER=${DEFER:-0} MPIX_GPU_DIRECT_ANNOUNCE=$a timeout -k 5 90 "${M[@]}" $b/"$@" > $out/${name}_$v.txt 2>&1; log "$name $v rc=$?"; }
}
G=(-d cuda --set kernel=write --buffers "D D" -i 600 -x 50 -m 131072:67108864)
P=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:65536)
H=(--device cuda --seconds 0.4 --reps 3 --sizes 64,1024,8192 --variants classic,mpix)
for rep in 1 2 3; do
  for v in old off auto; do run direct$rep $v mpix_latency "${G[@]}" --mode enqueue; done
  for v in old off auto; do run bw$rep $v mpix_bw -d cuda --buffers "D D" --mode enqueue -m 8:67108864 -i 10 -x 3; done
done
for rep in 1 2; do
  for v in old auto; do run small$rep $v mpix_latency "${P[@]}" --mode enqueue; done
  for v in old auto; do DEFER=1 run halo$rep $v mpix_halo "${H[@]}"; done
done
budget=$((budget + 180))
gpu_tests
