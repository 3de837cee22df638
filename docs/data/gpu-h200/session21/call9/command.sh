#!/bin/bash
# Session 21 call 9: probe_call_cost with two more launch forms (a kernel with the copy
# kernels' parameters; cuLaunchKernel), under MPS (two processes at once) and without.
budget=${1:-120}
source scripts/device_prologue.sh
nvcc -O2 -arch=sm_90 -o /tmp/pcc bench/cuda/probe_call_cost.cu -lcuda && log "probe built"
(/tmp/pcc > $out/mps_two_a.txt 2>&1 & /tmp/pcc > $out/mps_two_b.txt 2>&1; wait); log "mps two done"
echo quit | nvidia-cuda-mps-control; sleep 2; log "MPS stopped"
/tmp/pcc > $out/nomps_one.txt 2>&1; log "no mps one rc=$?"
