#!/bin/bash
# Ran on one H100 (2026-12-06 17:03 UTC). Moved from docs/data/gpu-h200/session32/call3 after: the call got an H100.
# Session 32 call 3: what a programmatic dependent launch costs the host (bench/cuda/
# probe_call_cost.cu: cuLaunchKernel against cuLaunchKernelEx with and without the attribute,
# one process under MPS, three runs), and D D one way 8 B-1 KiB with MPIX_CUDA_PDL off / on /
# on with the benchmark's kernel a programmatic dependent too ("app"), H H 8 B beside them.
budget=${1:-200}
source scripts/device_prologue.sh
M+=(-x MPIX_CUDA_PDL)
nvcc -O2 -arch=sm_90 bench/cuda/probe_call_cost.cu -lcuda -o build-gpu/probe_call_cost > $out/probe_build.log 2>&1
for rep in 1 2 3; do
  left && { timeout -k 5 60 build-gpu/probe_call_cost > $out/call_cost_$rep.txt 2>&1; log "call cost $rep rc=$?"; }
done
L=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 200 -m 8:1024)
H=(-d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8)
for rep in 1 2 3; do
  for p in off on app; do
    export MPIX_CUDA_PDL=$([ $p = off ] && echo off || echo on)
    extra=(); [ $p = app ] && extra=(--set launch=pdl)
    left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" "${extra[@]}" --mode enqueue > $out/dd_${p}_$rep.txt 2>&1; log "dd $p $rep rc=$?"; }
  done
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" --mode enqueue > $out/hh_$rep.txt 2>&1; log "hh $rep rc=$?"; }
done
