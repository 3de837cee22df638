#!/bin/bash
# Ran on one H100 (2026-12-06 09:41:31 UTC).
# Session 30 call 1: where issue 12's large staged messages lose to mpi-sync. D D with GPU-direct
# off (staged), with MPIX_PROFILE=1 (agent post / network / turnaround per op) and without; the
# same with the agent copying (MPIX_AGENT_COPY_MAX=-1); mpi-sync; and H H enqueue against plain
# MPI (the MPI transfer alone, agent against a blocking call). 128 KiB to 4 MiB, two rounds.
budget=${1:-300}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PROFILE -x MPIX_AGENT_COPY_MAX)
L=(--set kernel=write -i 100 -x 10 -m 131072:4194304)
D=(-d cuda --buffers "D D")
H=(-d cuda --buffers "H H")
run() { local name=$1; shift; left && { timeout -k 5 60 "$@" > $out/$name.txt 2>&1; log "$name rc=$?"; }; }
for rep in 1 2; do
  run staged_$rep env MPIX_GPU_DIRECT=off "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" "${L[@]}" --mode enqueue
  run mpisync_$rep "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" "${L[@]}" --mode mpi-sync
  run hh_enqueue_$rep "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" "${L[@]}" --mode enqueue
  run hh_mpi_$rep "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" "${L[@]}" --mode mpi
done
run staged_profile env MPIX_GPU_DIRECT=off MPIX_PROFILE=1 "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" "${L[@]}" --mode enqueue
run hh_profile env MPIX_PROFILE=1 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" "${L[@]}" --mode enqueue
run staged_agentcopy env MPIX_GPU_DIRECT=off MPIX_AGENT_COPY_MAX=-1 "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" "${L[@]}" --mode enqueue
for s in 1048576 4194304; do
  run staged_profile_$s env MPIX_GPU_DIRECT=off MPIX_PROFILE=1 "${M[@]}" build-gpu/bench/mpix_latency "${D[@]}" --set kernel=write -i 100 -x 10 -m $s:$s --mode enqueue
done
