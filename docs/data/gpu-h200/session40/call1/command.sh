#!/bin/bash
# Session 40 call 1: the agent's idle watch (MPIX_AGENT_IDLE_US; default 50 us on 4+ CPUs, 0 =
# the old behaviour: sleep at once). Same build, the setting alternating (default first, then
# 0), two rounds each: the halo (1x2, deferred triggers, every variant), the in-flight sweep on
# CUDA streams with device buffers (issue 14: flat from 1 in flight), 8 B one way H H and D D
# (enqueue; mpi-sync as the reference), the idle agent's CPU; then every gpu test.
budget=${1:-545}  # gpu tests while SECONDS < budget
stop=${2:-370}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
{ lscpu; grep -o -w -E 'waitpkg|mwaitx|monitor' /proc/cpuinfo | sort | uniq -c; } > "$out/cpu.txt" 2>&1
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_AGENT_IDLE_US)
# A small size first: a cold machine's first pilot runs few iterations.
export MPIX_DEFER_TRIGGER=1
for k in 1 2; do
  for w in -1 0; do
    export MPIX_AGENT_IDLE_US=$w
    step halo_idle${w}_$k 45 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.3 \
      --reps 3 --sizes 64,1024,8192 --variants classic,mpix,partitioned
  done
done
# Leads for the host-bound 64^2 halo (512 B halos: staged, eager): the agent copies the staged
# halos (the Waitall then waits with a memory operation, no kernel launch on the application's
# thread), or every halo goes GPU-direct (no copy out; the receiver's kernel pulls).
unset MPIX_AGENT_IDLE_US
M+=(-x MPIX_AGENT_COPY_MAX -x MPIX_GPU_DIRECT_EAGER_MAX)
for k in 1 2; do
  MPIX_AGENT_COPY_MAX=4096 step halo_agentcopy_$k 30 "${M[@]}" build-gpu/bench/mpix_halo \
    --device cuda --seconds 0.3 --reps 3 --sizes 64,1024 --variants classic,mpix
  MPIX_GPU_DIRECT_EAGER_MAX=0 step halo_eager0_$k 30 "${M[@]}" build-gpu/bench/mpix_halo \
    --device cuda --seconds 0.3 --reps 3 --sizes 64,1024 --variants classic,mpix
done
for k in 1 2; do
  for w in -1 0; do
    export MPIX_AGENT_IDLE_US=$w
    step scale_inflight_idle${w}_$k 40 "${M[@]}" build-gpu/bench/mpix_scale -d cuda \
      --buffers device --sweep inflight -r 20
  done
done
export MPIX_DEFER_TRIGGER=0
for k in 1 2; do
  for b in "H H" "D D"; do
    for w in -1 0; do
      export MPIX_AGENT_IDLE_US=$w
      step "lat_${b// /}_idle${w}_$k" 20 "${M[@]}" build-gpu/bench/mpix_latency -d cuda \
        --set kernel=write -i 1000 -x 100 -m 8:8 --buffers "$b" --mode enqueue
    done
    step "lat_${b// /}_mpisync_$k" 20 "${M[@]}" build-gpu/bench/mpix_latency -d cuda \
      --set kernel=write -i 1000 -x 100 -m 8:8 --buffers "$b" --mode mpi-sync
  done
done
unset MPIX_AGENT_IDLE_US
step agent_idle 20 mpirun -np 1 build-gpu/bench/mpix_agent_idle -t 1
gpu_tests
log done
