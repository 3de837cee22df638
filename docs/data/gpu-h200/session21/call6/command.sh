#!/bin/bash
# Session 21 call 6: the mpi provider tests its requests again at once where MPI_Testsome found
# none done (MPIX_MPI_RETEST=on, the new default) against once per agent loop (off), one binary,
# alternating three times: H H and D D 8 B one way, and bandwidth; one profiled H H run.
budget=${1:-240}
source scripts/device_prologue.sh
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --mode enqueue -m 8:8 -i 3000 -x 300)
B=(build-gpu/bench/mpix_bw -d cuda --buffers "H H" -m 8:1048576)
for i in 1 2 3; do
  for v in on off; do
    left && { timeout -k 5 40 "${M[@]}" -x MPIX_MPI_RETEST=$v "${L[@]}" --buffers "H H" > $out/hh_${v}$i.txt 2>&1; log "hh $v $i rc=$?"; }
    left && { timeout -k 5 40 "${M[@]}" -x MPIX_MPI_RETEST=$v "${L[@]}" --buffers "D D" > $out/dd_${v}$i.txt 2>&1; log "dd $v $i rc=$?"; }
  done
done
for v in on off; do
  left && { timeout -k 5 60 "${M[@]}" -x MPIX_MPI_RETEST=$v "${B[@]}" > $out/bw_$v.txt 2>&1; log "bw $v rc=$?"; }
done
left && { timeout -k 5 40 "${M[@]}" -x MPIX_PROFILE=1 "${L[@]}" --buffers "H H" > $out/hh_profile.txt 2>&1; log "hh profile rc=$?"; }
for t in mpi_pingpong_np2 mpi_p2p_np2 gpu_p2p_memop_np2 gpu_event_memop_np2 gpu_direct_memop_np2; do
  left && { timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest.log 2>&1; log "$t rc=$?"; }
done
