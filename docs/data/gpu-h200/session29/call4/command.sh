#!/bin/bash
# Ran on one H200 (2026-12-06 06:45 UTC). The change it measured was then taken out (results-gpu.md, session 29).
# Session 29 call 4. new = the working tree (2695018: a deferred MPIX_Waitall_enqueue writes its
# trigger before the fused kernel of a receive a GPU-direct message waits for); old = 93571b3
# (old2/, carried: the tree just before it). The deferred and GPU-direct gpu tests; the halo
# with deferred triggers at 1024^2 (8 KiB halos), 4096^2 (32 KiB) and 8192^2 (64 KiB), old /
# new alternating three times; a deferred D D exchange's host time per call at 8 and 64 KiB.
budget=${1:-300}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
cmake -S old2 -B build-old2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old2.log" 2>&1 &&
  cmake --build build-old2 -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_old2.log" 2>&1
log "old2 built rc=$?"
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "deferred|direct"); do
  left || break
  timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_gpu.log 2>&1
  rc=$?; echo "$t rc=$rc" >> $out/ctest_summary.txt; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
for rep in 1 2 3; do
  for b in old2 gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 120 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 1024,4096,8192 --variants classic,mpix --json $out/halo_${b}_$rep.json > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in old2 gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write -m 8192:65536 --buffers "D D" --mode exchange-cpu -i 3000 -x 200 > $out/xcpu_${b}_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
  done
done
