#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS.
# Session 37 call 6 (a28a460): the kernel trigger mode's batches as one kernel (run_ops) against
# a kernel per operation (old/ = ff0426a), MPIX_TRIGGER=kernel, alternating, two rounds: D D one
# way 8 B-64 KiB (kernel in the chain) and the halo (deferred triggers); then the kernel-mode and
# partitioned gpu tests on this commit.
stop=${1:-200}     # benchmark steps only where they end before SECONDS = stop
budget=${2:-300}   # gpu tests while SECONDS < budget
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
build_old mpix_latency mpix_halo
export MPIX_TRIGGER=kernel
M+=(-x MPIX_TRIGGER -x MPIX_DEFER_TRIGGER)
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
for k in 1 2; do
  for v in gpu old; do
    MPIX_DEFER_TRIGGER=0 step lat_dd_${v}_$k 30 "${M[@]}" build-$v/bench/mpix_latency -d cuda \
      --set kernel=write -i 1000 -x 100 -m 8:65536 --buffers "D D" --mode enqueue
    MPIX_DEFER_TRIGGER=1 step halo_${v}_$k 30 "${M[@]}" build-$v/bench/mpix_halo --device cuda \
      --seconds 0.3 --reps 3 --sizes 64,1024 --variants classic,mpix
  done
done
unset MPIX_TRIGGER
want='^(gpu_.*_kernel_np2|partitioned_cuda_.*|jacobi_cuda_partitioned.*)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$want"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
log done
