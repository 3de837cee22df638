#!/bin/bash
# Ran on one H100 (2026-12-06 09:54:29 UTC).
# Session 30 call 3. (a) Where the CPUs are (lscpu, NUMA). (b) The agent's MPI transfer against a
# blocking one: H H with the empty kernel (no PCIe write of the message), enqueue against
# mpi-sync, 128 KiB-16 MiB, two rounds. (c) What a pointer classification costs: the runtime's
# query against the driver's with three attributes (ptrq.cu, beside this file). (d) A D D
# exchange's host time per call, old (8123296, old/) against new (the working tree: the pool's
# indexed classes, stagers from a free list), deferred triggers three rounds, default one.
budget=${1:-300}
source scripts/device_prologue.sh
M+=(-x MPIX_DEFER_TRIGGER)
{ lscpu; command -v numactl > /dev/null && numactl -H; } > $out/cpus.txt 2>&1
build_old mpix_latency
L=(-d cuda --buffers "H H" -i 100 -x 10 -m 131072:16777216)
for rep in 1 2; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode enqueue > $out/hh_enqueue_$rep.txt 2>&1; log "hh enqueue $rep rc=$?"; }
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency "${L[@]}" --mode mpi-sync > $out/hh_mpisync_$rep.txt 2>&1; log "hh mpi-sync $rep rc=$?"; }
done
P=docs/data/gpu-h100/session30/call3  # ran from docs/data/gpu-h200/session30/call3, moved after the run
nvcc -O2 -std=c++20 -arch=sm_90 -ccbin mpicxx $P/ptrq.cu -o /tmp/ptrq -lcuda > $out/ptrq_build.txt 2>&1 &&
  { timeout -k 5 60 "${M[@]}" /tmp/ptrq > $out/ptrq.txt 2>&1; log "ptrq rc=$?"; }
X=(-d cuda --set kernel=write -m 8:8 --buffers "D D" --mode exchange-cpu -i 5000 -x 200)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { MPIX_DEFER_TRIGGER=1 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer1_$rep.txt 2>&1; log "xcpu $b defer=1 $rep rc=$?"; }
  done
done
for b in old gpu; do
  left && { MPIX_DEFER_TRIGGER=0 timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${X[@]}" > $out/xcpu_${b}_defer0.txt 2>&1; log "xcpu $b defer=0 rc=$?"; }
done
