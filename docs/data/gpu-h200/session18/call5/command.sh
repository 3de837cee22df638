#!/bin/bash
# Session 18 call 5: the session's final code (new) against 96e8712 (old, carried as old/):
# every gpu test; host time per call (exchange-cpu, isend-cpu); the halo benchmark; D D and H H
# latency against mpi-sync; the staged path against mpi-sync; the partitioned table.
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT)
[ -x build-old/bench/mpix_latency ] || (cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_old.log" 2>&1)
log "old built rc=$?"
gpu_tests
X=(-d cuda --set kernel=write -m 8:8)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" --buffers "D D" --mode exchange-cpu -i 5000 -x 200 > $out/xcpu_${b}_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" --buffers "D D" --mode isend-cpu -i 5000 -x 200 > $out/isendcpu_dd_${b}_$rep.txt 2>&1; log "isend-cpu $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024 --variants classic,mpix > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
left && { timeout -k 5 120 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192 --json $out/halo_final.json > $out/halo_final.txt 2>&1; log "halo final rc=$?"; }
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode enqueue -m 8:4194304 -i 200 -x 20 --json $out/dd.json > $out/dd.txt 2>&1; log "dd rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode mpi-sync -m 8:4194304 -i 200 -x 20 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpisync rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300 --json $out/hh.json > $out/hh.txt 2>&1; log "hh rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "H H" --mode mpi-sync -m 8:8 -i 3000 -x 300 --json $out/hh_mpisync.json > $out/hh_mpisync.txt 2>&1; log "hh mpisync rc=$?"; }
S=(-d cuda --set kernel=write --buffers "D D" -m 65536:67108864 -i 50 -x 5)
left && { MPIX_GPU_DIRECT=off timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_latency "${S[@]}" --mode enqueue --json $out/staged.json > $out/staged.txt 2>&1; log "staged rc=$?"; }
left && { timeout -k 5 90 "${M[@]}" build-gpu/bench/mpix_latency "${S[@]}" --mode mpi-sync --json $out/staged_mpisync.json > $out/staged_mpisync.txt 2>&1; log "staged mpisync rc=$?"; }
left && { timeout -k 5 100 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --sizes 4096:1048576 --json $out/part.json > $out/part.txt 2>&1; log "part rc=$?"; }
