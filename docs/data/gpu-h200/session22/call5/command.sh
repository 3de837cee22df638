#!/bin/bash
# Session 22 call 5: the session's final code (286b4be: announced GPU-direct sends off by
# default; IpcPath's FIN/READY tags; exported device words in gpu/ipc_slabs). Every gpu test
# (announced variants included); D D latency and bandwidth, H H 8 B, old (cd3ea9c) / new.
budget=${1:-360}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw
gpu_tests
L=(-d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304 --mode enqueue)
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --json $out/dd_$b.json > $out/dd_$b.txt 2>&1; log "dd $b rc=$?"; }
done
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda --set kernel=write -i 3000 -x 300 --buffers "H H" -m 8:8 --mode enqueue > $out/hh_$b.txt 2>&1; log "hh $b rc=$?"; }
done
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json $out/bw_$b.json > $out/bw_$b.txt 2>&1; log "bw $b rc=$?"; }
done
