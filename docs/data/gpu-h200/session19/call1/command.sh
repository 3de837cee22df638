#!/bin/bash
# Session 19 call 1: direct partitioned rounds (src/partitioned/direct_link.hpp), first run.
# The partitioned CUDA test (direct rounds, 10,000 in stream order, host-driven), the
# partitioned table direct / off (MPIX_PARTITIONED_DIRECT), the halo's partitioned variant
# direct / off, then every gpu test.
budget=${1:-470}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG)
left && { MPIX_LOG=info timeout -k 5 120 "${M[@]}" build-gpu/test/partitioned/partitioned_cuda "[direct]" > $out/ptest_direct.txt 2>&1; log "ptest direct rc=$?"; }
left && { timeout -k 5 120 "${M[@]}" build-gpu/test/partitioned/partitioned_cuda > $out/ptest_all.txt 2>&1; log "ptest all rc=$?"; [ -s $out/ptest_all.txt ] && tail -3 $out/ptest_all.txt; }
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --sizes 8:16777216)
left && { timeout -k 5 100 "${M[@]}" "${P[@]}" --json $out/part_direct.json > $out/part_direct.txt 2>&1; log "part direct rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 100 "${M[@]}" "${P[@]}" --modes partitioned > $out/part_off.txt 2>&1; log "part off rc=$?"; }
H=(build-gpu/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024,8192)
left && { timeout -k 5 100 "${M[@]}" "${H[@]}" --json $out/halo_direct.json > $out/halo_direct.txt 2>&1; log "halo direct rc=$?"; }
left && { MPIX_PARTITIONED_DIRECT=off timeout -k 5 100 "${M[@]}" "${H[@]}" --variants classic,partitioned > $out/halo_off.txt 2>&1; log "halo off rc=$?"; }
gpu_tests
