#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks (four in halo2x2) under CUDA MPS.
# Session 37 call 1 (f2d3518): the one-kernel Waitall (MPIX_WAITALL_FUSE=one; session 36's fixed
# form, never run on a GPU) through its gpu test variants first, then the rest of the gpu suite
# (gpu_p2p's 600-request Waitall on the default path among them). Then, alternating
# MPIX_WAITALL_FUSE=each (the default) and =one in one binary, deferred triggers: mpix_scale -d cuda
# with device buffers (the streams sweep: 16 receives + 16 sends per Waitall), the halo on a 2x2
# grid of four ranks on the one GPU, and the halo on two ranks (64, 1024, 8192), two rounds each.
budget=${1:-260}  # gpu tests while SECONDS < budget
stop=${2:-560}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep fuseone); do
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "fuseone: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
gpu_tests fuseone
export MPIX_DEFER_TRIGGER=1
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_WAITALL_FUSE)
M4=("${M[@]}"); M4[2]=4; M4+=(--oversubscribe)  # mpirun -np 4
for k in 1 2; do
  for f in each one; do
    export MPIX_WAITALL_FUSE=$f
    step scale_streams_${f}_$k 40 "${M[@]}" build-gpu/bench/mpix_scale -d cuda \
      --buffers device --sweep streams -r 20 --json "$out/scale_streams_${f}_$k.json"
    step halo2x2_${f}_$k 50 "${M4[@]}" build-gpu/bench/mpix_halo --device cuda --dims 2x2 \
      --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix
    step halo_${f}_$k 50 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 \
      --reps 3 --sizes 64,1024,8192 --variants classic,mpix
  done
done
log done
