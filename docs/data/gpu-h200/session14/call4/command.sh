#!/bin/bash
# Session 14 call 4 (branch partdirect): GPU-direct partitioned rounds after two fixes: the
# agent never lowers a done word a round's kernel raised (it stored an older round's value over
# a newer one: the stream waiting for the newer one hung), and all CUDA allocation of a link is
# made at MPIX_Psend_init / _Precv_init on the user's thread (the agent only maps at the
# handshake). The [direct] test, the whole partitioned CUDA test, mpix_partitioned on device
# buffers with the direct rounds (auto) and without (off), jacobi's partitioned variant.
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
finish() { echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz; }
trap finish EXIT
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
cmake --build build-gpu -j 16 -- -k 0 > "$out/build.log" 2>&1 || { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING
   -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_PARTITIONED_DIRECT -x MPIX_LOG_LEVEL)
export MPIX_PARTITIONED_DIRECT=auto
MPIX_LOG_LEVEL=info timeout -k 5 60 "${M[@]}" build-gpu/test/partitioned/partitioned_cuda "[direct]" > $out/direct_test.txt 2>&1
log "direct test rc=$?"; tail -3 $out/direct_test.txt
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --parts 1,8,64 --iters 50 --warmup 5 --sizes 4096:16777216)
MPIX_LOG_LEVEL=info timeout -k 5 50 "${M[@]}" "${P[@]}" --modes partitioned,enqueue,mpi-sync --json $out/part_auto.json > $out/part_auto.txt 2>&1
log "bench direct=auto rc=$?"; grep -v "Warning\|info" $out/part_auto.txt | tail -40
timeout -k 5 50 ctest --test-dir build-gpu -R "^partitioned_cuda_np2$|^jacobi_cuda_partitioned_np2$" --output-on-failure > $out/ctest.txt 2>&1
log "ctest partitioned rc=$?"; grep -E "Passed|Failed|Timeout" $out/ctest.txt
MPIX_PARTITIONED_DIRECT=off timeout -k 5 60 "${M[@]}" "${P[@]}" --modes partitioned --json $out/part_off.json > $out/part_off.txt 2>&1
log "bench direct=off rc=$?"; grep -v "Warning\|info" $out/part_off.txt | tail -20
