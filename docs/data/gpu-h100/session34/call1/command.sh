#!/bin/bash
# Ran on one H100 (the device tool gave an H100 for this call); results beside this file.
# Session 34 call 1: a large GPU-direct copy in that may wait for an announced send's data now
# waits behind a one-thread gate kernel (gate_then_publish), its grid launched after it, instead
# of holding up to 256 blocks on the GPU per receive. new = this tree (build-gpu); old = 0659c2a
# with this tree's gpu_direct_test.cpp and with hostfn streams announcing (the session-33 guard
# taken out, for a diagnosis only). Runs, in this order: the new test (12 streams each receive
# 16 MiB announced before the sender's fills start) on new (always), every gpu test on new, D D
# one way old / new, the new test on old (expected to hang: the GPU full of waiting blocks), and
# gpu_pipeline with hostfn triggers and announced sends on old (session 33's timeout), with the
# ranks' stacks meant to be taken while it hangs (the watchdog ended the ranks first: none).
budget=${1:-330}
source scripts/device_prologue.sh
build_old gpu_direct gpu_pipeline mpix_latency
M+=(-x MPIX_GPU_DIRECT_ANNOUNCE -x MPIX_TRIGGER -x MPIX_TEST_WATCHDOG_S -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
T='*receives waiting for announced data*'
restart() { pkill -9 -f build-old/ 2> /dev/null; mps_restart; }
starve() {  # starve BUILD ANNOUNCE
  local b=build-gpu; [ $1 = old ] && b=build-old
  MPIX_GPU_DIRECT_ANNOUNCE=$2 MPIX_TEST_WATCHDOG_S=25 timeout -k 5 35 "${M[@]}" $b/test/gpu/gpu_direct "$T" > $out/starve_$1_$2.txt 2>&1
  local rc=$?; log "starve $1 $2 rc=$rc"; [ $rc -eq 0 ] || restart
}
starve new always
gpu_tests
budget=420
G=(-d cuda --set kernel=write --buffers "D D" -i 400 -x 40 -m 131072:67108864)
for rep in 1 2; do
  for v in old new; do
    b=build-gpu/bench; [ $v = old ] && b=build-old/bench
    left && { timeout -k 5 40 "${M[@]}" $b/mpix_latency "${G[@]}" --mode enqueue > $out/direct${rep}_$v.txt 2>&1; log "direct$rep $v rc=$?"; }
  done
done
budget=460
left && starve old always
budget=480
if left; then
  MPIX_TRIGGER=hostfn MPIX_GPU_DIRECT_ANNOUNCE=always MPIX_TEST_WATCHDOG_S=20 MPIX_LOG_LEVEL=trace \
    MPIX_LOG_SUBSYS=mpi,agent timeout -k 5 36 "${M[@]}" --output-filename $out/hostfn \
    build-old/test/gpu/gpu_pipeline "*device buffers*" > $out/hostfn_diag.txt 2>&1 &
  sleep 24
  D=$(command -v gdb || command -v cuda-gdb); log "debugger: ${D:-none}"
  nvidia-smi > $out/hostfn_smi.txt 2>&1
  for p in $(pgrep -f build-old/test/gpu/gpu_pipeline); do
    [ -n "$D" ] && timeout 8 $D -p $p -batch -ex "thread apply all bt" > $out/hostfn_gdb_$p.txt 2>&1
  done
  wait; log "hostfn diag rc=$?"
  for f in $(find $out/hostfn -type f); do tail -c 200000 $f > $f.tail; rm $f; done
fi
