#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 15:40 UTC.
# Session 39 call 3: (1) the partitioned halo's host time with direct rounds asking the driver
# about their buffers once per request (CopyFacts, de58972) against the library before it
# (old/ = e1e70ac, carried), alternating, two rounds; (2) every gpu test at this commit
# (changes since call 1's 78/78: the wait order's ring, the enqueue path's cuts, CopyFacts).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
budget=${1:-300}
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
  for b in old gpu; do
    [ -x build-$b/bench/mpix_halo ] || continue
    step halo_part_${b}_$k 40 "${P[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.3 \
      --reps 3 --sizes 64,1024 --variants classic,mpix,partitioned
  done
done
unset MPIX_DEFER_TRIGGER
gpu_tests
log done
