#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in halo2x2) under CUDA MPS.
# Session 37 call 2 (ff0426a): the one-kernel Waitall with receives of several blocks each (a
# block per 4 KiB; before, receives over 4 KiB launched a kernel each). The gpu suites whose
# Waitalls take it first (gpu_p2p with its new 18-receive Waitall of 1 B-64 KiB, direct,
# pipeline, semantics, datatype, in every variant; the CUDA Jacobi checks), then the others. Then,
# alternating MPIX_WAITALL_FUSE=each (a kernel per receive) and =one in one binary, deferred
# triggers, two rounds: the halo on a 2x2 grid of four ranks on the one GPU (two receives a
# Waitall; 8 KiB and 32 KiB halos), GPU-direct (the default) and staged (MPIX_GPU_DIRECT=off).
budget=${1:-280}  # gpu tests while SECONDS < budget
stop=${2:-560}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
first='^(gpu_(p2p|direct|pipeline|semantics|datatype)_.*|jacobi_cuda_.*)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$first"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "first suites: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
gpu_tests "$first"
export MPIX_DEFER_TRIGGER=1 MPIX_GPU_DIRECT=auto
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_WAITALL_FUSE -x MPIX_GPU_DIRECT)
M4=("${M[@]}"); M4[2]=4; M4+=(--oversubscribe)  # mpirun -np 4
for k in 1 2; do
  for d in auto off; do
    for f in each one; do
      export MPIX_WAITALL_FUSE=$f MPIX_GPU_DIRECT=$d
      step halo2x2_${d}_${f}_$k 40 "${M4[@]}" build-gpu/bench/mpix_halo --device cuda --dims 2x2 \
        --seconds 0.3 --reps 3 --sizes 1024,4096 --variants classic,mpix
    done
  done
done
log done
