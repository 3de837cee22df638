#!/bin/bash
# Session 24 call 1: main at cc54b4c (session 22's mends and session 23's GPU-direct failure
# answer never ran on a GPU). The new fault tests first, then every gpu test; then session 22's
# set: D D latency (enqueue, mpi-sync), H H 8 B with the write kernel (enqueue, mpi-sync), D D
# and H H bandwidth; and the host-stream bandwidth lead of session 23 on a quiet machine:
# old (27cfc96) / new mpix_bw and mpix_latency on host streams, provider mpi, alternating.
budget=${1:-480}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw
for t in gpu_direct_fault_memop_np2 gpu_direct_fault_announced_memop_np2; do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
gpu_tests "gpu_direct_fault"
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write -i 300 -x 30)
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode enqueue -m 8:4194304 --json $out/dd_enqueue.json > $out/dd_enqueue.txt 2>&1; log "dd enqueue rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "D D" --mode mpi-sync -m 8:4194304 --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
for m in enqueue mpi-sync; do
  left && { timeout -k 5 60 "${M[@]}" "${L[@]}" --buffers "H H" --mode $m -m 8:8 -i 3000 -x 300 --json $out/hh_$m.json > $out/hh_$m.txt 2>&1; log "hh $m rc=$?"; }
done
for b in "D D" "H H"; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_bw -d cuda --buffers "$b" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json "$out/bw_${b// /}.json" > "$out/bw_${b// /}.txt" 2>&1; log "bw $b rc=$?"; }
done
for r in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider mpi --json $out/hbw_${b}_$r.json > $out/hbw_${b}_$r.txt 2>&1; log "host bw $b $r rc=$?"; }
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider mpi --json $out/hlat_${b}_$r.json > $out/hlat_${b}_$r.txt 2>&1; log "host lat $b $r rc=$?"; }
  done
done
