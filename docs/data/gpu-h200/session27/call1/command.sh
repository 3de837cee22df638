#!/bin/bash
# Session 27 call 1: session 26's prepared call (sourced: old = 2c13c18 carried as old/, new =
# the working tree, which now also asks the driver less per staged copy, 6a6c81b, and writes a
# deferring stream's trigger in host waits, 820e169), then the additions below.
source docs/data/gpu-h200/session26/call1/command.sh "${1:-480}"
# Session 27 additions (while time is left): the new tree's halo at all three block sizes with
# every variant, default and deferred; H H 8 B enqueue / mpi-sync.
for c in default defer; do
  left && { env $(cfg $c) timeout -k 5 120 "${M[@]}" build-gpu/bench/mpix_halo --device cuda --seconds 0.4 --reps 3 --sizes 64,1024,8192 --json $out/halo_all_${c}.json > $out/halo_all_${c}.txt 2>&1; log "halo all $c rc=$?"; }
done
for m in enqueue mpi-sync; do
  left && { timeout -k 5 60 "${M[@]}" build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -i 2000 -x 200 -m 8:8 --mode $m > $out/hh_$m.txt 2>&1; log "hh $m rc=$?"; }
done
