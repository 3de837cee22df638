#!/bin/bash
# Session 26 call 1: HEAD (1cb05cc) on the GPU. Every gpu test (sessions 25's CPU-side changes
# never ran here); then where a halo exchange's host time goes and what the existing settings
# give: exchange-cpu host time per call and the halo (64², 1024²) with the default, deferred
# triggers (MPIX_DEFER_TRIGGER=1), GPU-direct at every size (MPIX_GPU_DIRECT_EAGER_MAX=0) and
# both; D D latency with both against the default; D D 8 B with MPIX_PROFILE_RAW.
budget=${1:-480}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_EAGER_MAX -x MPIX_PROFILE -x MPIX_PROFILE_RAW)
gpu_tests
cfg() { # name -> env
  case $1 in
    default) echo "MPIX_DEFER_TRIGGER=0 MPIX_GPU_DIRECT_EAGER_MAX=4096" ;;
    defer) echo "MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_EAGER_MAX=4096" ;;
    direct) echo "MPIX_DEFER_TRIGGER=0 MPIX_GPU_DIRECT_EAGER_MAX=0" ;;
    both) echo "MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_EAGER_MAX=0" ;;
  esac
}
X=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -m 8:8 --buffers "D D")
for rep in 1 2; do
  for c in default defer direct both; do
    left && { env $(cfg $c) timeout -k 5 60 "${M[@]}" "${X[@]}" --mode exchange-cpu -i 5000 -x 200 > $out/xcpu_${c}_$rep.txt 2>&1; log "xcpu $c $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for c in default defer direct both; do
    left && { env $(cfg $c) timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix --json $out/halo_${c}_$rep.json > $out/halo_${c}_$rep.txt 2>&1; log "halo $c $rep rc=$?"; }
  done
done
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D" -i 300 -x 30)
for c in default both; do
  left && { env $(cfg $c) timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 8:4194304 --json $out/dd_$c.json > $out/dd_$c.txt 2>&1; log "dd $c rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --mode mpi-sync -m 8:4194304 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
mkdir -p $out/raw
left && { MPIX_PROFILE=1 MPIX_PROFILE_RAW=$out/raw/dd timeout -k 5 60 "${M[@]}" "${L[@]}" --mode enqueue -m 8:8 -i 2000 -x 100 > $out/dd_profile.txt 2>&1; log "dd profile rc=$?"; }
left && { MPIX_PROFILE=1 MPIX_PROFILE_RAW=$out/raw/hh timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 100 --mode enqueue -m 8:8 > $out/hh_profile.txt 2>&1; log "hh profile rc=$?"; }
