#!/bin/bash
# Session 27 call 1 (prepared in session 26; run in 27). new = the working tree (with 6a6c81b: fewer driver queries per staged copy) (a fused receive kernel writes the stream's trigger
# before it waits: a blocking MPIX_Recv_enqueue's trigger, and with MPIX_DEFER_TRIGGER=1 the
# exchange's deferred trigger in MPIX_Waitall_enqueue); old = 2c13c18 (carried as old/: the
# halo's host-steps print, without that change). The new deferred-trigger gpu tests first,
# then every gpu test; then where a halo exchange's host time goes (exchange-cpu per call, the
# halo's host steps) with the default and deferred triggers, old and new alternating; D D
# latency old / new / mpi-sync.
budget=${1:-480}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_GPU_DIRECT_EAGER_MAX)
build_old mpix_latency mpix_halo
for t in $(ctest --test-dir build-gpu -N | awk '/Test +#/{print $3}' | grep deferred); do
  left || break
  timeout -k 5 90 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
gpu_tests "deferred"
cfg() { case $1 in
    default) echo "MPIX_DEFER_TRIGGER=0 MPIX_GPU_DIRECT_EAGER_MAX=4096" ;;
    defer) echo "MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_EAGER_MAX=4096" ;;
    both) echo "MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT_EAGER_MAX=0" ;;
  esac; }
for rep in 1 2; do
  for b in old gpu; do
    for c in default defer; do
      left && { env $(cfg $c) timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200 > $out/xcpu_${b}_${c}_$rep.txt 2>&1; log "xcpu $b $c $rep rc=$?"; }
    done
  done
done
left && { env $(cfg both) timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200 > $out/xcpu_gpu_both_1.txt 2>&1; log "xcpu both rc=$?"; }
for rep in 1 2; do
  for b in old gpu; do
    for c in default defer; do
      left && { env $(cfg $c) timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix --json $out/halo_${b}_${c}_$rep.json > $out/halo_${b}_${c}_$rep.txt 2>&1; log "halo $b $c $rep rc=$?"; }
    done
  done
done
L=(-d cuda --set kernel=write --buffers "D D" -i 300 -x 30 -m 8:4194304)
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_$b.json > $out/dd_$b.txt 2>&1; log "dd $b rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
# Session 27 additions (while time is left): the new tree's halo at all three block sizes with
# every variant, default and deferred; H H 8 B enqueue / mpi-sync.
for c in default defer; do
  left && { env $(cfg $c) timeout -k 5 120 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024,8192 --json $out/halo_all_${c}.json > $out/halo_all_${c}.txt 2>&1; log "halo all $c rc=$?"; }
done
for m in enqueue mpi-sync; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8 --mode $m > $out/hh_$m.txt 2>&1; log "hh $m rc=$?"; }
done
