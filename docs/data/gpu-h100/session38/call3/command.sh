#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in the 2x2 halo) under CUDA MPS.
# Session 38 call 3 (the last device time): halo, MPIX_GPU_DIRECT_COMPLETION answer vs gpu,
# deferred triggers, 1x2 one round each, then 2x2 at 1024^2.
stop=${1:-170}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
export MPIX_DEFER_TRIGGER=1
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_COMPLETION)
M4=("${M[@]}"); M4[2]=4; M4+=(--oversubscribe)
for c in answer gpu; do
  export MPIX_GPU_DIRECT_COMPLETION=$c
  step halo_$c 40 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.2 --reps 3 \
    --sizes 64,1024,8192 --variants classic,mpix
done
for c in answer gpu; do
  export MPIX_GPU_DIRECT_COMPLETION=$c
  step halo2x2_$c 30 "${M4[@]}" build-gpu/bench/mpix_halo --device cuda --dims 2x2 \
    --seconds 0.2 --reps 3 --sizes 1024 --variants classic,mpix
done
