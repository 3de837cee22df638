#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 15:29 UTC.
# Session 39 call 2: (1) who copies the 1024^2 halo's GPU-direct messages now that mpix_halo keeps
# its halo buffers (session 38 call 4's trace count, again); (2) where the 64^2 halo's host time
# goes under MPIX_PROFILE=1 (GPU runtime calls per enqueue call, mpix and partitioned variants;
# 1024^2 too, where the GPU bounds the iteration);
# (3) the 1024^2 halo announced or not, completion answer or gpu (below, (4)); (5) H H and D D 8 B one way, enqueue against mpi-sync, two rounds (issue 14 / 12 targets).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
export MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_COMPLETION=gpu MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi
T=("${M[@]}" -x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_COMPLETION -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
step halo_trace 40 "${T[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.05 --reps 1 \
  --sizes 1024 --variants mpix
{ grep -c "copied by the stream" "$out/halo_trace.txt"; grep -c "copied by the agent" "$out/halo_trace.txt"
  grep -c "completed on the GPU" "$out/halo_trace.txt"; grep -c "freed" "$out/halo_trace.txt"
  grep -v "mpix\[" "$out/halo_trace.txt" | tail -5; } > "$out/counts.txt"
gzip "$out/halo_trace.txt"
unset MPIX_LOG_LEVEL MPIX_LOG_SUBSYS MPIX_GPU_DIRECT_COMPLETION
export MPIX_PROFILE=1
P=("${M[@]}" -x MPIX_DEFER_TRIGGER -x MPIX_PROFILE)
for v in mpix partitioned; do
  step halo_profile_$v 40 "${P[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.2 \
    --reps 1 --sizes 64,1024 --variants classic,$v
done
unset MPIX_PROFILE
# (4) the 1024^2 halo with its 8 KiB sends announced (auto announces only > 64 KiB), with and
# without completion on the GPU: is the header's trip through both agents the chain's cost?
A=("${M[@]}" -x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_ANNOUNCE -x MPIX_GPU_DIRECT_COMPLETION)
for k in 1 2; do
  for a in auto always; do
    for c in answer gpu; do
      export MPIX_GPU_DIRECT_ANNOUNCE=$a MPIX_GPU_DIRECT_COMPLETION=$c
      step halo_${a}_${c}_$k 30 "${A[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.3 \
        --reps 3 --sizes 1024 --variants classic,mpix
    done
  done
done
unset MPIX_GPU_DIRECT_ANNOUNCE MPIX_GPU_DIRECT_COMPLETION
export MPIX_DEFER_TRIGGER=0
L=("${M[@]}" -x MPIX_DEFER_TRIGGER)
for k in 1 2; do
  for b in "H H" "D D"; do
    for m in enqueue mpi-sync; do
      step "lat_${b// /}_${m}_$k" 30 "${L[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write \
        -i 1000 -x 100 -m 8:8 --buffers "$b" --mode $m
    done
  done
done
{ which nsys ncu perf; ls /usr/local/cuda/bin | head -40; } > "$out/tools.txt" 2>&1
log done
