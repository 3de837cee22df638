#!/bin/bash
# Session 22 call 6: the final code (copy-in kernels load their host words in one round trip;
# no announce bookkeeping while off) against cd3ea9c (old/): the GPU-direct, p2p, pipeline and
# partitioned tests (kernels changed), announced variants included; D D latency old / new
# alternating, twice; D D bandwidth old / new; D D announced once.
budget=${1:-330}
source scripts/device_prologue.sh
build_old mpix_latency mpix_bw
for t in gpu_direct_memop_np2 gpu_direct_kernel_np2 gpu_direct_announced_memop_np2 gpu_p2p_memop_np2 gpu_p2p_announced_memop_np2 gpu_pipeline_memop_np2 gpu_pipeline_announced_memop_np2 gpu_datatype_memop_np2 gpu_chunk_memop_np2 partitioned_cuda_np2 partitioned_cuda_direct_np2 jacobi_cuda_check_np2; do
  left || break
  timeout -k 5 100 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> $out/ctest_first.log 2>&1
  rc=$?; log "$t rc=$rc"; [ $rc -eq 0 ] || mps_restart
done
L=(-d cuda --set kernel=write -i 300 -x 30 --buffers "D D" -m 8:4194304 --mode enqueue)
for r in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency "${L[@]}" --json $out/dd_$b$r.json > $out/dd_$b$r.txt 2>&1; log "dd $b $r rc=$?"; }
  done
done
left && { timeout -k 5 60 "${M[@]}" -x MPIX_GPU_DIRECT_ANNOUNCE=auto build-gpu/bench/mpix_latency "${L[@]}" --json $out/dd_announced.json > $out/dd_announced.txt 2>&1; log "dd announced rc=$?"; }
for b in old gpu; do
  left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_bw -d cuda --buffers "D D" --mode enqueue -m 65536:67108864 -i 10 -x 3 --json $out/bw_$b.json > $out/bw_$b.txt 2>&1; log "bw $b rc=$?"; }
done
