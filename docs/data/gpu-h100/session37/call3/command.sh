#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in halo2x2) under CUDA MPS.
# Session 37 call 3 (ff0426a's library): GPU-direct from 4 KiB (MPIX_GPU_DIRECT_EAGER_MAX=4096,
# the default) against from 64 KiB (=65536: 8-64 KiB messages staged), alternating, two rounds:
# the halo on 1x2 ranks (64², 1024², 2048², 4096²: 512 B-32 KiB halos) and on a 2x2 grid of four
# ranks on the one GPU, deferred triggers; then D D one way 4 KiB-128 KiB (kernel in the chain).
stop=${1:-540}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
export MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_EAGER_MAX=4096
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_EAGER_MAX)
M4=("${M[@]}"); M4[2]=4; M4+=(--oversubscribe)  # mpirun -np 4
for k in 1 2; do
  for e in 4096 65536; do
    export MPIX_GPU_DIRECT_EAGER_MAX=$e
    step halo_${e}_$k 45 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.3 --reps 3 \
      --sizes 64,1024,2048,4096 --variants classic,mpix
    step halo2x2_${e}_$k 30 "${M4[@]}" build-gpu/bench/mpix_halo --device cuda --dims 2x2 \
      --seconds 0.3 --reps 3 --sizes 1024,2048 --variants classic,mpix
  done
done
export MPIX_DEFER_TRIGGER=0
for k in 1 2; do
  for e in 4096 65536; do
    export MPIX_GPU_DIRECT_EAGER_MAX=$e
    step lat_dd_${e}_$k 30 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write \
      -i 1000 -x 100 -m 4096:131072 --buffers "D D" --mode enqueue
  done
done
log done
