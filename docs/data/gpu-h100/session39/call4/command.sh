#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 16:11 UTC.
# Session 39 call 4: call 3's partitioned halo comparison with the order reversed (the new
# library first in each pair), to tell the order's effect from the change's (CopyFacts,
# de58972, and starts of direct requests that no longer wake the agent, f3696f0; against
# old/ = e1e70ac, carried), two rounds; then the partitioned gpu tests.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
build_old mpix_halo
export MPIX_DEFER_TRIGGER=1
P=("${M[@]}" -x MPIX_DEFER_TRIGGER)
for k in 1 2; do
  for b in gpu old; do
    [ -x build-$b/bench/mpix_halo ] || continue
    step halo_part_${b}_$k 40 "${P[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.3 \
      --reps 3 --sizes 64,1024 --variants classic,mpix,partitioned
  done
done
gpu_tests '^(gpu_|jacobi_cuda_(check|pdl|deferred)).*'
log done
