#!/bin/bash
# Session 33 call 3: the final announce rule (auto: sends of more than 64 KiB only, never from a
# stream whose triggers are host functions): the pipeline, GPU-direct and p2p gpu tests (every
# variant; gpu_pipeline_hostfn had timed out in call 2), then D D one way 8 KiB-4 MiB with
# MPIX_GPU_DIRECT_ANNOUNCE off against auto (the default), one round each.
budget=${1:-150}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT_ANNOUNCE)
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "gpu_pipeline|gpu_direct|gpu_p2p"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
G=(-d cuda --set kernel=write --buffers "D D" -i 600 -x 50 -m 8192:4194304)
for a in off auto; do
  budget=$((budget + 15))
  left && { MPIX_GPU_DIRECT_ANNOUNCE=$a timeout -k 5 30 "${M[@]}" build-gpu/bench/mpix_latency "${G[@]}" --mode enqueue > $out/direct_$a.txt 2>&1; log "direct $a rc=$?"; }
done
