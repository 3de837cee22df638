#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in the 2x2 halo) under CUDA MPS.
# Session 38 call 4: who copies the 1024^2 halo's GPU-direct messages with
# MPIX_GPU_DIRECT_COMPLETION=gpu (the done word is written only by a stream's copy): trace log
# lines counted, a short run.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
export MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_COMPLETION=gpu MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_COMPLETION -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
timeout -k 5 40 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.05 --reps 1 \
  --sizes 1024 --variants mpix > "$out/halo_trace.txt" 2>&1
log "halo rc=$?"
{ grep -c "copied by the stream" "$out/halo_trace.txt"; grep -c "copied by the agent" "$out/halo_trace.txt"
  grep -c "completed on the GPU" "$out/halo_trace.txt"; grep -v "mpix\[" "$out/halo_trace.txt" | tail -5; } > "$out/counts.txt"
gzip "$out/halo_trace.txt"
