#!/bin/bash
# Session 22 call 4: announced GPU-direct sends, unfired ones no longer tested each agent loop,
# against cd3ea9c (old/). GPU-direct and p2p tests first; D D latency old / new alternating,
# twice; new with MPIX_GPU_DIRECT_EAGER_MAX=0; mpi-sync; halo old / new; D D bandwidth old / new.
budget=${1:-420}
source scripts/device_prologue.sh
build_old mpix_latency mpix_halo mpix_bw
for t in gpu_direct_memop_np2 gpu_direct_kernel_np2 gpu_p2p_memop_np2 gpu_p2p_hostfn_np2 gpu_pipeline_memop_np2 gpu_semantics_memop_np2 gpu_event_memop_np2; do
  left || break
  timeout -k 5 100 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
L=(-d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304)
for r in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-old/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_old$r.json > $out/dd_old$r.txt 2>&1; log "dd old $r rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_new$r.json > $out/dd_new$r.txt 2>&1; log "dd new $r rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_EAGER_MAX=0 build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_new_eager0.json > $out/dd_new_eager0.txt 2>&1; log "dd new eager0 rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
for b in old gpu; do
  left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192 --json $out/halo_$b.json > $out/halo_$b.txt 2>&1; log "halo $b rc=$?"; }
done
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json $out/bw_$b.json > $out/bw_$b.txt 2>&1; log "bw $b rc=$?"; }
done
