#!/bin/bash
# Session 21 call 1: the CUDA kernels' waits as acquire loads and their publishing stores as
# release stores (no membar.sys / membar.gl), the direct round's open-word wait beside the marks'.
# A probe of what a device MPIX_Pready's parts cost; in-kernel / partitioned and D D / H H
# latency new against old (old/ = 04735bb) twice; one profiled D D 8 B run; every gpu test.
budget=${1:-540}
source scripts/device_prologue.sh
(build_old mpix_partitioned mpix_latency) &
nvcc -O2 -arch=sm_90 -o $out/probe_fences bench/cuda/probe_fences.cu && $out/probe_fences > $out/probe_fences.txt 2>&1
log "probe rc=$?"; rm -f $out/probe_fences
wait
Q=(--buffers device --parts 1,8,64 --sizes 8:2048 --modes in-kernel,partitioned)
L=(-d cuda --set kernel=write --mode enqueue -i 300 -x 30)
for i in 1 2; do
  for b in gpu old; do
    left && { timeout -k 5 40 "${M[@]}" build-$b/bench/partitioned/mpix_partitioned "${Q[@]}" > $out/part_${b}$i.txt 2>&1; log "part $b $i rc=$?"; }
    left && { timeout -k 5 40 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --buffers "D D" -m 8:4194304 > $out/dd_${b}$i.txt 2>&1; log "dd $b $i rc=$?"; }
    left && { timeout -k 5 40 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --buffers "H H" -m 8:8 -i 3000 -x 300 > $out/hh_${b}$i.txt 2>&1; log "hh $b $i rc=$?"; }
  done
done
left && { timeout -k 5 40 "${M[@]}" -x MPIX_PROFILE=1 build-gpu/bench/mpix_latency "${L[@]}" --buffers "D D" -m 8:8 -i 2000 -x 100 > $out/dd_profile.txt 2>&1; log "dd profile rc=$?"; }
gpu_tests
