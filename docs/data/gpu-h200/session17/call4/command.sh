#!/bin/bash
# Session 17 call 4: where a GPU-direct partition's ~8 µs goes. bench/cuda/probe_copies.cu (N
# small device-to-device copies on one stream against one kernel copying the N pieces listed in
# a pinned table), alone and as two processes under MPS; MPIX_PROFILE=1 of 64 and 8 partitions
# of 4 KiB (device buffers, GPU-direct); whether nsys exists here.
budget=${1:-400}
source scripts/device_prologue.sh
nvcc -O2 -arch=sm_90 bench/cuda/probe_copies.cu -o /tmp/probe_copies > "$out/probe_build.log" 2>&1
log "probe build rc=$?"
timeout -k 5 60 /tmp/probe_copies 100 > "$out/probe_alone.txt" 2>&1; log "probe alone rc=$?"
timeout -k 5 90 "${M[@]}" --output-filename "$out/probe_mps" /tmp/probe_copies 100 > /dev/null 2>&1; log "probe two processes rc=$?"
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --iters 200 --warmup 10 --modes partitioned --sizes 4096:4096)
for p in 64 8; do
  MPIX_PROFILE=1 timeout -k 5 60 "${M[@]}" -x MPIX_PROFILE "${P[@]}" --parts $p > "$out/prof_part$p.txt" 2>&1
  log "profile $p partitions rc=$?"
done
{ command -v nsys; command -v ncu; ls /usr/local/cuda/bin | head -50; } > "$out/tools.txt" 2>&1
