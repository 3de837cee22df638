#!/bin/bash
# Session 13 call 3: bench/cuda/probe_chain.cu (call 2's hung: 500 chains queued ahead filled the
# launch queue and blocked the only thread), without and under MPS.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$out/machine.txt" 2>&1
nvcc -O2 -arch=sm_90 bench/cuda/probe_chain.cu -o /tmp/probe_chain -lcuda > $out/nvcc.log 2>&1; log "nvcc rc=$?"
timeout 60 /tmp/probe_chain 3000 > $out/chain_nomps.txt 2>&1; log "chain no MPS rc=$?"
nvidia-cuda-mps-control -d && log "MPS started"
timeout 60 /tmp/probe_chain 3000 > $out/chain_mps.txt 2>&1; log "chain MPS rc=$?"
