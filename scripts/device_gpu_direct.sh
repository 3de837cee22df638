#!/bin/bash
# A device call (carry .devdeps; one H200, two ranks under CUDA MPS) for the GPU-direct hangs
# (MPIX_GPU_DIRECT=auto): runs gpu_event and gpu_pipeline with trace logs of provider mpi and a
# long test watchdog, and takes every thread's backtrace (cuda-gdb, or gdb) of both ranks while
# they hang. Results in $OUT: gd_<test>.log, gd_<test>_bt.txt, steps.log.
set -u
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
nvidia-cuda-mps-control -d && log "MPS started"
trap 'echo quit | nvidia-cuda-mps-control' EXIT
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 --target gpu_event gpu_pipeline > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
dbg=$(command -v cuda-gdb || command -v gdb || true)
log "build done; debugger: ${dbg:-none}"
export MPIX_GPU_DIRECT=auto MPIX_LOG_LEVEL=trace MPIX_LOG_SUBSYS=mpi MPIX_TEST_WATCHDOG_S=60
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_GPU_DIRECT -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS
   -x MPIX_TEST_WATCHDOG_S)
for t in gpu_event gpu_pipeline; do
  ( timeout 75 "${M[@]}" "build-gpu/test/gpu/$t" > "$out/gd_$t.log" 2>&1; echo "$t rc=$?" >> "$out/gd_$t.log" ) &
  sleep 20  # a run that passes takes a few seconds; one still running now hangs
  for p in $(pgrep -f "build-gpu/test/gpu/$t\$"); do
    echo "== pid $p"
    [ -n "$dbg" ] && timeout 20 "$dbg" -batch -p "$p" -ex "thread apply all bt 16" 2>&1 | grep -E "^#|^Thread"
  done > "$out/gd_${t}_bt.txt" 2>&1
  wait
  log "$t: $(tail -1 "$out/gd_$t.log")"
done
