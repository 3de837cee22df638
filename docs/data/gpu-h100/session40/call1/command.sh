#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 ~18:45 UTC; new = 84cf3a0, old = c28e603.
# Session 40 call 1: the agent's idle sleep on the notifier's futex word instead of its condition
# variable (Notifier::idle_wait): the first enqueue after the agent fell idle pays one system call
# to wake it. old = c28e603 (condition variable), new = this tree, built and run in one call,
# alternating, two rounds each: session 31's exchange with the host waiting for the stream after
# every exchange (the agent idle at each round's first enqueue), the in-flight sweep on CUDA
# streams with device buffers (1 in flight: the idle stream's first call), the halo (1x2,
# deferred triggers), 8 B one way H H / D D; then every gpu test on new.
budget=${1:-545}  # gpu tests while SECONDS < budget
stop=${2:-380}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
{ lscpu; grep -o -w -E 'waitpkg|mwaitx|monitor' /proc/cpuinfo | sort | uniq -c; } > "$out/cpu.txt" 2>&1
build_old mpix_latency mpix_scale mpix_halo
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_BENCH_SYNC_EVERY)
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 3000 -x 200)
export MPIX_DEFER_TRIGGER=1
for k in 1 2; do
  for b in new old; do
    d=build-gpu; [ $b = old ] && d=build-old
    MPIX_BENCH_SYNC_EVERY=1 step xsync1_${b}_$k 30 "${M[@]}" $d/bench/mpix_latency "${X[@]}"
    step scale_inflight_${b}_$k 40 "${M[@]}" $d/bench/mpix_scale -d cuda --buffers device \
      --sweep inflight -r 20
    step halo_${b}_$k 40 "${M[@]}" $d/bench/mpix_halo --device cuda --seconds 0.3 --reps 3 \
      --sizes 64,1024 --variants classic,mpix,partitioned
  done
done
export MPIX_DEFER_TRIGGER=0
for b in new old; do
  d=build-gpu; [ $b = old ] && d=build-old
  for buf in "H H" "D D"; do
    step "lat_${buf// /}_${b}" 20 "${M[@]}" $d/bench/mpix_latency -d cuda --set kernel=write \
      -i 1000 -x 100 -m 8:8 --buffers "$buf" --mode enqueue
  done
done
gpu_tests
log done
