#!/bin/bash
# Session 22 call 3: announced GPU-direct sends after call 2 (the ready word a device word in every
# trigger mode; a receive matched before its stream wait still copied by its stream) against
# cd3ea9c (old/). GPU-direct, p2p and the failed hostfn tests first; D D latency old / new
# alternating, twice; new with MPIX_GPU_DIRECT_EAGER_MAX=0; mpi-sync; H H 8 B; other gpu tests.
budget=${1:-480}
source scripts/device_prologue.sh
build_old mpix_latency
for t in gpu_direct_memop_np2 gpu_direct_kernel_np2 gpu_p2p_memop_np2 gpu_p2p_hostfn_np2 gpu_pipeline_hostfn_np2 gpu_event_hostfn_np2; do
  left || break
  timeout -k 5 100 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"
  if [ $rc -ne 0 ]; then
    mps_restart
    bin=build-gpu/test/gpu/${t%%_memop_np2}; bin=${bin%%_kernel_np2}; bin=${bin%%_unannounced}; bin=${bin%%_hostfn_np2}
    [ -x "$bin" ] && timeout -k 5 60 "${M[@]}" -x MPIX_LOG_LEVEL=trace -x MPIX_LOG_SUBSYS=mpi -x MPIX_TEST_WATCHDOG_S=40 $bin > $out/trace_$t.log 2>&1
    log "trace of $t rc=$?"; mps_restart
  fi
done
L=(-d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304)
for r in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-old/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_old$r.json > $out/dd_old$r.txt 2>&1; log "dd old $r rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_new$r.json > $out/dd_new$r.txt 2>&1; log "dd new $r rc=$?"; }
done
left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_EAGER_MAX=0 build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue --json $out/dd_new_eager0.json > $out/dd_new_eager0.txt 2>&1; log "dd new eager0 rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync --json $out/dd_mpisync.json > $out/dd_mpisync.txt 2>&1; log "dd mpi-sync rc=$?"; }
H=(-d cuda --set kernel=write -i 3000 -x 300 --buffers "H H" -m 8:8 --mode enqueue)
left && { timeout -k 5 60 "${M[@]}" build-old/bench/mpix_latency "${H[@]}" > $out/hh_old.txt 2>&1; log "hh old rc=$?"; }
left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${H[@]}" > $out/hh_new.txt 2>&1; log "hh new rc=$?"; }
gpu_tests "^gpu_direct_memop_np2$|^gpu_direct_kernel_np2$|^gpu_p2p_memop_np2$|^gpu_p2p_hostfn_np2$|^gpu_pipeline_hostfn_np2$|^gpu_event_hostfn_np2$"
