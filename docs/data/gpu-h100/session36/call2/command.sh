#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS, on 6131b15 (code of 771b0e4).
# Session 36 call 2: 771b0e4 -- a Waitall's fused receives in one kernel, a block per receive --
# against old/ = bee55b7 (a kernel per receive; the 255-operation batch fix in both). The gpu
# tests whose Waitalls take the new kernel first (p2p / pipeline / semantics / datatype / direct
# suites in memop, staged, deferred and kernel modes, gpu_p2p's new 600-request Waitall, the
# CUDA Jacobi checks; a short call: little device time was left); then, alternating new and old: mpix_scale -d cuda with
# device buffers (deferred triggers: 16 receives + 16 sends per Waitall in the streams sweep),
# and the halo on a 2x2 grid of four ranks on the one GPU (two neighbours each: two receives
# per Waitall), deferred triggers.
budget=${1:-150}  # gpu tests while SECONDS < budget
stop=${2:-280}      # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
want='^(gpu_(p2p|pipeline|semantics|datatype|direct)_(memop|deferred_memop|staged_memop|kernel)_np2|jacobi_cuda_(check|deferred_200)_np2)$'
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -E "$want"); do
  left || break
  timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
  rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
done
log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
build_old mpix_scale mpix_halo
export MPIX_DEFER_TRIGGER=1
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M4=("${M[@]}"); M4[2]=4  # mpirun -np 4
M4+=(-x MPIX_DEFER_TRIGGER --oversubscribe)
for k in 1 2; do
  for v in gpu old; do
    step scale_streams_${v}_$k 40 "${M[@]}" -x MPIX_DEFER_TRIGGER build-$v/bench/mpix_scale -d cuda \
      --buffers device --sweep streams -r 20 --json "$out/scale_streams_${v}_$k.json"
    step scale_inflight_${v}_$k 40 "${M[@]}" -x MPIX_DEFER_TRIGGER build-$v/bench/mpix_scale -d cuda \
      --buffers device --sweep inflight -r 20
    step halo2x2_${v}_$k 50 "${M4[@]}" build-$v/bench/mpix_halo --device cuda --dims 2x2 \
      --seconds 0.4 --reps 3 --sizes 64,1024 --variants classic,mpix
  done
done
log done
