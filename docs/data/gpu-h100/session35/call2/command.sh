#!/bin/bash
# Ran on one H100 80GB HBM3 (kind nvidia-h100-x1), two ranks under CUDA MPS, on f995a47 (code as
# 501c10c: MPIX_Pready_enqueue before it made device marks itself).
# Session 35 call 2 (call 1 again on the warm machine, without its gpu tests, which passed; call 1's
# mpirun runs refused root: call 1 ran without .devdeps). mpix_partitioned with the new pready-enqueue mode
# against partitioned / enqueue / mpi-sync (device buffers, one partition), then gpu_pipeline
# hanging with hostfn triggers and announced sends: old/ = 0af31dc with the guard taken out
# (mpi_provider.cpp's hostfn check, ipc_may_announce -> true). First with MPIX_CUDA_PDL=off
# (does the hang need programmatic launches?), then with PDL on and the watchdog off, stacks of
# both ranks (cuda-gdb: kernels and host threads; /proc task stacks).
budget=260
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # call 1 ran without .devdeps, which sets them
source scripts/device_prologue.sh
# (every gpu test passed in call 1: 70 of 70)
# Later steps only while the call has time left (limit: 600 s or the session's device time).
for k in 1 2; do
  [ $SECONDS -lt 300 ] || break
  timeout -k 5 90 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1 \
    --sizes 16:4194304 --iters 300 --modes pready-enqueue,partitioned,enqueue,mpi-sync \
    --json "$out/partitioned_$k.json" > "$out/partitioned_$k.txt" 2>&1
  log "mpix_partitioned round $k rc=$?"
done
[ $SECONDS -lt 330 ] || { log "no time for the hostfn diagnosis"; exit 0; }
build_old gpu_pipeline
H=(-x MPIX_TRIGGER -x MPIX_GPU_DIRECT_ANNOUNCE -x MPIX_CUDA_PDL -x MPIX_TEST_WATCHDOG_S)
export MPIX_TRIGGER=hostfn MPIX_GPU_DIRECT_ANNOUNCE=always MPIX_TEST_WATCHDOG_S=30
for pdl in off on; do
  MPIX_CUDA_PDL=$pdl timeout -k 5 40 "${M[@]}" "${H[@]}" build-old/test/gpu/gpu_pipeline \
    "*device buffers*" > "$out/hostfn_pdl_$pdl.$SECONDS.txt" 2>&1
  rc=$?; log "hostfn announced PDL=$pdl rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
[ $SECONDS -lt 420 ] || { log "no time for the stacks"; exit 0; }
export MPIX_TEST_WATCHDOG_S=0 MPIX_CUDA_PDL=on
timeout -k 5 70 "${M[@]}" "${H[@]}" build-old/test/gpu/gpu_pipeline "*device buffers*" \
  > "$out/hostfn_stacks_run.txt" 2>&1 &
sleep 20
G=/usr/local/cuda/bin/cuda-gdb; [ -x $G ] || G=$(command -v gdb)
nvidia-smi > "$out/hostfn_smi.txt" 2>&1
for p in $(pgrep -f build-old/test/gpu/gpu_pipeline); do
  for t in /proc/$p/task/*; do echo "$t $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack 2> /dev/null | head -8; done > "$out/hostfn_tasks_$p.txt" 2>&1
  timeout 40 $G -p $p -batch -ex "info cuda kernels" -ex "info cuda blocks" -ex "thread apply all bt 30" > "$out/hostfn_gdb_$p.txt" 2>&1
done
log "stacks taken"
wait; log "done"
