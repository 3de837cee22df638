#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS.
# Session 37 call 5 (457a8cc): the enqueued partitioned calls' writes and waits in one kernel
# (MPIX_PARTITIONED_STREAM_OPS=kernel; the kernel trigger mode's batches take the same kernel).
# First the tests that run it: the partitioned CUDA suite in both forms, the CUDA Jacobi's
# partitioned variant in both (--check), every gpu test in the kernel trigger mode; then,
# alternating memop and kernel, two rounds: the halo (classic, mpix, partitioned; deferred
# triggers) and mpix_partitioned on device buffers in one partition; then the other gpu tests.
stop=${1:-400}     # benchmark steps only where they end before SECONDS = stop
budget=${2:-420}   # the last gpu tests while SECONDS < budget
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
first='^(partitioned_cuda_.*|jacobi_cuda_partitioned.*|gpu_.*_kernel_np2)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$first"); do
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
export MPIX_PARTITIONED_STREAM_OPS=kernel MPIX_DEFER_TRIGGER=0
M+=(-x MPIX_PARTITIONED_STREAM_OPS -x MPIX_DEFER_TRIGGER)
timeout -k 5 60 "${M[@]}" build-gpu/examples/jacobi/jacobi --device cuda -n 1000 -m 700 --iters 200 \
  --check-every 10 --variant partitioned --partitions 4 --check > "$out/jacobi_opskernel.txt" 2>&1
echo "jacobi_cuda_partitioned_opskernel rc=$?" >> "$out/ctest_summary.txt"
log "first tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
for k in 1 2; do
  for o in memop kernel; do
    export MPIX_PARTITIONED_STREAM_OPS=$o
    MPIX_DEFER_TRIGGER=1 step halo_${o}_$k 45 "${M[@]}" build-gpu/bench/mpix_halo --device cuda \
      --seconds 0.3 --reps 3 --sizes 64,1024,8192 --variants classic,mpix,partitioned
    step part_${o}_$k 40 "${M[@]}" build-gpu/bench/partitioned/mpix_partitioned --buffers device \
      --parts 1 --sizes 16:1048576 --iters 300 --modes partitioned,pready-enqueue,enqueue \
      --json "$out/part_${o}_$k.json"
  done
done
unset MPIX_PARTITIONED_STREAM_OPS
gpu_tests "$first"
log done
