#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in the 2x2 halo) under CUDA MPS; 2026-12-07 14:51 UTC.
# Session 39 call 1 (session 38's call 1, which never ran, with mpix_halo now keeping its halo
# buffers across runs of one size): GPU-direct sends completed on the GPU
# (MPIX_GPU_DIRECT_COMPLETION=gpu, opt-in; answer = the default). First the GPU-direct suites,
# then the halo (1x2 with the partitioned variant, and 2x2; deferred triggers) and the D D
# ping-pong / bandwidth from 8 KiB, gpu vs answer alternating; then the other gpu tests while
# time is left.
budget=${1:-540}  # gpu tests while SECONDS < budget
stop=${2:-380}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
first='^(gpu_direct_.*|gpu_p2p_(memop|kernel)_np2|gpu_pipeline_memop_np2|gpu_p2p_(gpucompletion|deferred|fuseeach)_memop_np2|gpu_pipeline_gpucompletion_memop_np2)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$first"); do
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "first suites: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
export MPIX_DEFER_TRIGGER=1
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_COMPLETION)
M4=("${M[@]}"); M4[2]=4; M4+=(--oversubscribe)  # mpirun -np 4
for k in 1 2; do
  for c in answer gpu; do
    export MPIX_GPU_DIRECT_COMPLETION=$c
    step halo_${c}_$k 45 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.3 \
      --reps 3 --sizes 64,1024,8192 --variants classic,mpix,partitioned
  done
done
for c in answer gpu; do
  export MPIX_GPU_DIRECT_COMPLETION=$c
  step halo2x2_$c 35 "${M4[@]}" build-gpu/bench/mpix_halo --device cuda --dims 2x2 \
    --seconds 0.3 --reps 3 --sizes 1024,4096 --variants classic,mpix
done
export MPIX_DEFER_TRIGGER=0
for c in answer gpu; do
  export MPIX_GPU_DIRECT_COMPLETION=$c
  step lat_dd_$c 30 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 500 \
    -x 50 -m 8192:4194304 --buffers "D D" --mode enqueue
  step bw_dd_$c 40 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue \
    -m 8192:4194304 -i 20 -x 5
done
gpu_tests "$first"
log done
