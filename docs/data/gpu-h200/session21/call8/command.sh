#!/bin/bash
# Session 21 call 8: bench/cuda/probe_call_cost.cu, the host cost of each kind of stream call
# an enqueue makes: one process without CUDA MPS, one under MPS, and two at once under MPS (as
# two ranks sharing the GPU run).
budget=${1:-120}
source scripts/device_prologue.sh
nvcc -O2 -arch=sm_90 -o /tmp/pcc bench/cuda/probe_call_cost.cu -lcuda && log "probe built"
/tmp/pcc > $out/mps_one.txt 2>&1; log "mps one rc=$?"
(/tmp/pcc > $out/mps_two_a.txt 2>&1 & /tmp/pcc > $out/mps_two_b.txt 2>&1; wait); log "mps two done"
echo quit | nvidia-cuda-mps-control; sleep 2; log "MPS stopped"
/tmp/pcc > $out/nomps_one.txt 2>&1; log "no mps one rc=$?"
(/tmp/pcc > $out/nomps_two_a.txt 2>&1 & /tmp/pcc > $out/nomps_two_b.txt 2>&1; wait); log "no mps two done"
