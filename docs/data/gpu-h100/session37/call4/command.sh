#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS.
# Session 37 call 4 (HEAD after ff0426a: the one-kernel Waitall, multi-block receives, default):
# where issue 12's and 14's targets stand with today's defaults — D D 8 B-4 MiB and H H 8 B one
# way (kernel in the chain) with mpi-sync beside, the halo (1x2; classic, mpix, partitioned;
# deferred triggers), two rounds; mpix_scale -d cuda --buffers device (deferred); then the gpu
# tests while time is left.
stop=${1:-330}     # benchmark steps only where they end before SECONDS = stop
budget=${2:-540}   # then gpu tests while SECONDS < budget
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
export MPIX_DEFER_TRIGGER=0  # the default; steps that defer say so
L=(-d cuda --set kernel=write -i 1000 -x 100 -m 8:4194304)
step() {  # step NAME SECONDS CMD...: runs CMD under mpirun while the call has time for it
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "${M[@]}" -x MPIX_DEFER_TRIGGER "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
for k in 1 2; do
  for m in enqueue mpi-sync; do
    step lat_dd_${m}_$k 40 build-gpu/bench/mpix_latency "${L[@]}" --buffers "D D" --mode $m
    step lat_hh_${m}_$k 30 build-gpu/bench/mpix_latency "${L[@]}" --buffers "H H" -m 8:8 --mode $m
  done
  MPIX_DEFER_TRIGGER=1 step halo_$k 60 build-gpu/bench/mpix_halo --device cuda --seconds 0.4 \
    --reps 3 --sizes 64,1024,8192 --variants classic,mpix,partitioned
done
for sw in streams inflight; do
  MPIX_DEFER_TRIGGER=1 step scale_${sw}_device 40 build-gpu/bench/mpix_scale -d cuda \
    --buffers device --sweep $sw -r 20
done
gpu_tests
log done
