#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 ~21:58 UTC; commit cc71ba2 (its code is ad00d5d's, session 40's).
# Session 41 call 1 (session 40 call 2's plan, which found no machine then). (1) MPIX_PROFILE=1 with the new
# parts of an enqueue call (make / staging / request / submit / trigger, mean us per call on the
# application's thread): the halo at 64^2 and 1024^2, the D D exchange, the streams sweep on
# device buffers -- where issue 14's <= 1.0 us per call on device buffers is missed. (2) The 64^2
# halo is bound by its host thread (call 1: mpix 26-28 us an iteration, 24-28 of them host time;
# a kernel launch ~4.3 us under MPS, the Waitall's copy-in kernel one of them): settings that
# move work off the application's thread, against the default, same build, two rounds:
# MPIX_AGENT_COPY_MAX=4096 (the agent copies the 512 B staged halos; the Waitall is stream memory
# operations only), MPIX_GPU_DIRECT_EAGER_MAX=0 (every halo GPU-direct: no copy out), and
# --device cuda-pdl (every kernel of both variants a programmatic dependent).
stop=${1:-470}  # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
export MPIX_DEFER_TRIGGER=1
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_AGENT_COPY_MAX -x MPIX_GPU_DIRECT_EAGER_MAX -x MPIX_PROFILE)
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 3000 -x 200)
export MPIX_PROFILE=1
step halo_profile 30 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.3 --reps 1 \
  --sizes 64,1024 --variants classic,mpix
step xcpu_profile 20 "${M[@]}" build-gpu/bench/mpix_latency "${X[@]}"
step scale_profile 30 "${M[@]}" build-gpu/bench/mpix_scale -d cuda --buffers device \
  --sweep streams -r 10
unset MPIX_PROFILE
H=(--seconds 0.3 --reps 3 --sizes 64,1024 --variants classic,mpix,partitioned)
for k in 1 2 3; do
  step halo_default_$k 25 "${M[@]}" build-gpu/bench/mpix_halo --device cuda "${H[@]}"
  MPIX_AGENT_COPY_MAX=4096 step halo_agentcopy_$k 25 "${M[@]}" build-gpu/bench/mpix_halo \
    --device cuda "${H[@]}"
  MPIX_GPU_DIRECT_EAGER_MAX=0 step halo_eager0_$k 25 "${M[@]}" build-gpu/bench/mpix_halo \
    --device cuda "${H[@]}"
  step halo_pdl_$k 25 "${M[@]}" build-gpu/bench/mpix_halo --device cuda-pdl "${H[@]}"
done
log done
