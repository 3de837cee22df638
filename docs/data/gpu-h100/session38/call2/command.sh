#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in the 2x2 halo) under CUDA MPS.
# Session 38 call 2 (what little device time was left after the refused starts): only the gpu
# tests of completion on the GPU (MPIX_GPU_DIRECT_COMPLETION=gpu) and the GPU-direct suite with
# the default, while time is left.
budget=${1:-150}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
only='^(gpu_direct_gpucompletion_memop_np2|gpu_p2p_gpucompletion_memop_np2|gpu_direct_memop_np2|gpu_pipeline_gpucompletion_memop_np2)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$only"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
