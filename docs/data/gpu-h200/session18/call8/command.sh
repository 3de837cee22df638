#!/bin/bash
# Session 18 call 8: is the large-message gap between enqueue and mpi-sync (H H, and the staged
# D D path) a matter of where the threads run? mpirun --bind-to none (as every run so far) /
# socket / core, 1-16 MiB, enqueue and mpi-sync in each.
budget=${1:-100}
source scripts/device_prologue.sh
B=(mpirun -np 2 -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -m 1048576:16777216 -i 30 -x 3)
for bind in none socket core; do
  for m in enqueue mpi-sync; do
    left && { timeout -k 5 40 "${B[@]}" --bind-to $bind "${L[@]}" --buffers "H H" --mode $m > $out/hh_${bind}_$m.txt 2>&1; log "hh $bind $m rc=$?"; }
  done
  left && { MPIX_GPU_DIRECT=off timeout -k 5 40 "${B[@]}" --bind-to $bind "${L[@]}" --buffers "D D" --mode enqueue > $out/dd_staged_${bind}.txt 2>&1; log "dd staged $bind rc=$?"; }
done
