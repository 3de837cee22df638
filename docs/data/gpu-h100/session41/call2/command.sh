#!/bin/bash
# Ran on one H100 80GB HBM3 (the tool gave an H100), two ranks under CUDA MPS; 2026-12-07 ~23:02 UTC; commit a449c20 (LTO on by default, before the toolchain check). Every LTO link failed on this machine (GCC 13.3 in /opt/gcc with the system ld: "could not run lto-wrapper", build_lto_errors.txt), so no LTO step ran (lto_run_failed.txt) and no gpu test was built; the nolto steps ran.
# Session 41 call 2: libmpix linked with link-time optimisation (MPIX_LTO, on by default with GCC)
# against the same tree without it (-DMPIX_LTO=OFF), built and run in one call, alternating,
# three rounds (as time allows): the enqueue call's host time on device buffers (session 31's exchange, the host
# waiting each round: MPIX_Irecv_enqueue / MPIX_Isend_enqueue / MPIX_Waitall_enqueue medians),
# 8 B one way H H and D D (kernel writes the message), the halo (1x2, deferred triggers); then
# every gpu test on the LTO build.
budget=${1:-330}  # gpu tests while SECONDS < budget
stop=${2:-120}    # benchmark steps only where they end before SECONDS = stop
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
grep -q "link-time optimisation" "$out/configure.log" && log "build-gpu: LTO on"
cmake -S . -B build-nolto -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_LTO=OFF > "$out/configure_nolto.log" 2>&1 &&
  cmake --build build-nolto -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_nolto.log" 2>&1
log "build-nolto rc=$?"
step() {  # step NAME SECONDS CMD...
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt $stop ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
M+=(-x MPIX_DEFER_TRIGGER -x MPIX_BENCH_SYNC_EVERY)
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 3000 -x 200)
for k in 1 2 3; do
  for b in lto nolto; do
    d=build-gpu; [ $b = nolto ] && d=build-nolto
    export MPIX_DEFER_TRIGGER=1
    MPIX_BENCH_SYNC_EVERY=1 step xsync1_${b}_$k 30 "${M[@]}" $d/bench/mpix_latency "${X[@]}"
    step halo_${b}_$k 40 "${M[@]}" $d/bench/mpix_halo --device cuda --seconds 0.3 --reps 3 \
      --sizes 64,1024 --variants classic,mpix,partitioned
    export MPIX_DEFER_TRIGGER=0
    for buf in "H H" "D D"; do
      step "lat_${buf// /}_${b}_$k" 20 "${M[@]}" $d/bench/mpix_latency -d cuda --set kernel=write \
        -i 1000 -x 100 -m 8:8 --buffers "$buf" --mode enqueue
    done
  done
done
gpu_tests
log done
