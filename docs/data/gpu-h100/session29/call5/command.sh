#!/bin/bash
# Ran on one H100 (2026-12-06 07:08 UTC).
# Session 29 call 5: where a D D MPIX_Irecv_enqueue's host time goes (it costs ~1 us more than
# the Isend on the GPU machine, with fewer instructions). exp/ = HEAD with phase_timers.patch
# (throwaway timers reported as MPIX_PROFILE's "X ..." lines: the whole call by kind, op_create,
# staging_setup, bounce_acquire, request_start, op_submit, what follows it, Stream::exec); not
# project code. Carried as exp/ (git archive HEAD | tar x -C exp; patch -p1 < phase_timers.patch).
budget=${1:-200}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_PROFILE -x MPIX_STAGING_HOST)
cmake -S exp -B build-exp -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_exp.log" 2>&1 &&
  cmake --build build-exp -j "$(nproc)" --target mpix_latency mpix_enqueue_cost > "$out/build_exp.log" 2>&1
log "exp built rc=$?"
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2; do
  for c in 0 1; do
    left && { MPIX_PROFILE=1 MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-exp/bench/mpix_latency "${X[@]}" > $out/xcpu_exp_defer${c}_$rep.txt 2>&1; log "xcpu exp defer=$c $rep rc=$?"; }
    left && { MPIX_DEFER_TRIGGER=$c timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${X[@]}" > $out/xcpu_gpu_defer${c}_$rep.txt 2>&1; log "xcpu gpu defer=$c $rep rc=$?"; }
  done
done
# Host streams, one rank (no GPU in the path): the same calls' cost on these 16 cores.
for rep in 1 2; do
  for sh in 0 1; do
    left && { MPIX_PROFILE=1 MPIX_STAGING_HOST=$sh timeout -k 5 60 mpirun -np 1 --bind-to none -x MPIX_PROFILE -x MPIX_STAGING_HOST build-exp/bench/mpix_enqueue_cost -n 40000 -w 64 > $out/cost_exp_staging${sh}_$rep.txt 2>&1; log "cost exp staging=$sh $rep rc=$?"; }
  done
done
