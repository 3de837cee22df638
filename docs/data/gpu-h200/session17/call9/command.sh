#!/bin/bash
# Session 17 call 9: the final code's point-to-point latencies for issues 12 and 14's targets:
# D D 8 B-64 MiB, enqueue and mpi-sync; H H 8 B, enqueue and mpi-sync (kernel writes the message).
budget=${1:-110}
source scripts/device_prologue.sh
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write)
lat() { local name=$1; shift; left || return
  timeout -k 5 40 "${M[@]}" "${L[@]}" "$@" --json "$out/$name.json" > "$out/$name.txt" 2>&1; log "$name rc=$?"; }
lat dd --buffers "D D" --mode enqueue -m 8:67108864 -i 200 -x 20
lat dd_mpisync --buffers "D D" --mode mpi-sync -m 8:67108864 -i 200 -x 20
lat hh --buffers "H H" --mode enqueue -m 8:8 -i 3000 -x 300
lat hh_mpisync --buffers "H H" --mode mpi-sync -m 8:8 -i 3000 -x 300
