#!/bin/bash
# Ran on one H100 (2026-12-06 06:37 UTC).
# Session 29 call 3: no regression elsewhere from 7996c7f, and call 2's unsettled D D 4-128 KiB.
# old = cd37187 (old/, carried), new = the working tree. D D bandwidth (window 64) and H H
# bandwidth old/new alternating twice; D D one way 8 B-128 KiB old/new alternating four times;
# H H 8 B enqueue / mpi-sync, old/new, twice.
budget=${1:-240}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 8:67108864 -i 10 -x 3 --json $out/bw_dd_${b}_$rep.json > $out/bw_dd_${b}_$rep.txt 2>&1; log "bw dd $b $rep rc=$?"; }
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "H H" --mode enqueue -m 8:4194304 -i 10 -x 3 --json $out/bw_hh_${b}_$rep.json > $out/bw_hh_${b}_$rep.txt 2>&1; log "bw hh $b $rep rc=$?"; }
  done
done
L=(-d cuda --set kernel=write --buffers "D D" -i 500 -x 50 -m 8:131072)
for rep in 1 2 3 4; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --mode enqueue > $out/dd_${b}_$rep.txt 2>&1; log "dd $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in old gpu; do
    for m in enqueue mpi-sync; do
      left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8 --mode $m > $out/hh_${b}_${m}_$rep.txt 2>&1; log "hh $b $m $rep rc=$?"; }
    done
  done
done
