#!/bin/bash
# Session 14 call 3: the GPU-direct partitioned rounds after the reply-tag fix (the receiver
# answered on its own partition count's tag, so a refused offer hung): the [direct] test, then
# mpix_partitioned on device buffers, 8 partitions only, with info logs (call 2 hung there).
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
log "direct test rc=$?"; tail -4 $out/direct_test.txt
P=(build-gpu/bench/partitioned/mpix_partitioned --buffers device --modes partitioned --iters 50 --warmup 5)
MPIX_LOG_LEVEL=info timeout -k 5 40 "${M[@]}" "${P[@]}" --parts 8 --sizes 4096:65536 > $out/part8.txt 2>&1
log "bench parts 8 rc=$?"; grep -v Warning $out/part8.txt | grep -v "info cuda\|info mpi:\|provider mpi" | tail -30
MPIX_LOG_LEVEL=info timeout -k 5 40 "${M[@]}" "${P[@]}" --parts 1,8,64 --sizes 4096:16777216 > $out/part_all.txt 2>&1
log "bench all rc=$?"; grep -v Warning $out/part_all.txt | grep -v "info" | tail -45
