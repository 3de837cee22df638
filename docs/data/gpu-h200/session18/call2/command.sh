#!/bin/bash
# Session 18 call 2: a fused receive kernel carries the other waits of its MPIX_Waitall_enqueue
# (old = 96e8712, new = the working tree): every gpu test on new; host cost per call of a halo
# exchange (mpix_latency --mode exchange-cpu, D D 8 B) and the halo benchmark, old against new,
# alternating.
budget=${1:-500}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT_EAGER_MAX -x MPIX_DEFER_TRIGGER)
mkdir -p old && git archive 96e8712 | tar x -C old && rm -rf old/docs
cp bench/cuda/gpu_latency.cpp old/bench/cuda/gpu_latency.cpp  # the exchange-cpu mode
(cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_old.log" 2>&1) &
gpu_tests
wait; log "old built"
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "D D" --mode exchange-cpu -m 8:8 -i 5000 -x 200 > $out/xcpu_${b}_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
  done
done
for v in "MPIX_GPU_DIRECT_EAGER_MAX=0" "MPIX_DEFER_TRIGGER=1" "MPIX_GPU_DIRECT_EAGER_MAX=0 MPIX_DEFER_TRIGGER=1"; do
  tag=$(echo $v | tr ' =' '__')
  left && { env $v timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "D D" --mode exchange-cpu -m 8:8 -i 5000 -x 200 > $out/xcpu_gpu_$tag.txt 2>&1; log "xcpu $tag rc=$?"; }
done
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024 --variants classic,mpix > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
left && { MPIX_GPU_DIRECT_EAGER_MAX=0 timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024 --variants classic,mpix > $out/halo_gpu_eager0.txt 2>&1; log "halo eager0 rc=$?"; }
rm -rf old
