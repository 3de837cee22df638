#!/bin/bash
# Session 36 call 1: every gpu test on 76af5f0's library (14beef0 -- MPIX_Pready_enqueue makes
# the send's device marks -- and 6831e4d never ran on a GPU), then mpix_partitioned, device
# buffers, one partition: pready-enqueue / partitioned / enqueue / mpi-sync, new and old (old/ =
# 501c10c, before 14beef0) alternately, two rounds each. Then, while time is left, where the
# issue-12/14 targets stand on this machine with today's code: D D and H H 8 B-4 MiB one way
# (kernel in the chain) with mpi-sync beside, the halo (deferred triggers), and mpix_scale's
# sweeps on CUDA streams (deferred triggers; device and pinned host buffers).
budget=300
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/device_prologue.sh
gpu_tests
build_old mpix_partitioned
P=(--buffers device --parts 1 --sizes 16:4194304 --iters 300
   --modes pready-enqueue,partitioned,enqueue,mpi-sync)
for k in 1 2; do
  for v in gpu old; do
    [ $SECONDS -lt 420 ] || break 2
    [ -x build-$v/bench/partitioned/mpix_partitioned ] || continue
    timeout -k 5 60 "${M[@]}" build-$v/bench/partitioned/mpix_partitioned "${P[@]}" \
      --json "$out/partitioned_${v}_$k.json" > "$out/partitioned_${v}_$k.txt" 2>&1
    rc=$?; log "mpix_partitioned $v round $k rc=$rc"; [ $rc -eq 0 ] || mps_restart
  done
done
export MPIX_DEFER_TRIGGER=0  # the default; steps that defer say so
L=(-d cuda --set kernel=write -i 1000 -x 100 -m 8:4194304)
step() {  # step NAME SECONDS CMD...: runs CMD under mpirun while the call has time for it
  local name=$1 t=$2; shift 2
  [ $((SECONDS + t)) -lt 560 ] || { log "$name skipped: no time"; return; }
  timeout -k 5 "$t" "${M[@]}" -x MPIX_DEFER_TRIGGER "$@" > "$out/$name.txt" 2>&1
  local rc=$?; log "$name rc=$rc"; [ $rc -eq 0 ] || mps_restart
}
status_round() {  # status_round K
  local k=$1 m
  for m in enqueue mpi-sync; do
    step lat_dd_${m}_$k 40 build-gpu/bench/mpix_latency "${L[@]}" --buffers "D D" --mode $m
    step lat_hh_${m}_$k 30 build-gpu/bench/mpix_latency "${L[@]}" --buffers "H H" -m 8:8 --mode $m
  done
  MPIX_DEFER_TRIGGER=1 step halo_$k 60 build-gpu/bench/mpix_halo --device cuda --seconds 0.4 \
    --reps 3 --sizes 64,1024,8192 --variants classic,mpix,partitioned
}
# issue 14's flatness on CUDA streams (host streams give every stream a worker thread)
scale() {  # scale BUFFERS
  local sw
  for sw in inflight streams; do
    MPIX_DEFER_TRIGGER=1 step scale_${sw}_$1 40 build-gpu/bench/mpix_scale -d cuda --buffers $1 \
      --sweep $sw -r 20
  done
}
status_round 1
scale device
status_round 2
scale host
log done
