#!/bin/bash
# Session 34 call 2: the stacks of gpu_pipeline hanging with hostfn triggers and announced sends
# (old = 0659c2a with the session-33 guard taken out, as in call 1, where the watchdog ended the
# ranks before the debugger came). Only that, and without scripts/device_prologue.sh's build of
# this tree: 294 s of device time were left.
out=${OUT:?}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
trap 'echo quit | nvidia-cuda-mps-control; cd $out && tar czf /tmp/r.tgz . && rm -rf ./* && mv /tmp/r.tgz results.tgz' EXIT
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d
cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target gpu_pipeline > "$out/build_old.log" 2>&1
log "old built rc=$?"
MPIX_TRIGGER=hostfn MPIX_GPU_DIRECT_ANNOUNCE=always timeout -k 5 45 mpirun -np 2 --bind-to none \
  -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x CUDA_MODULE_LOADING \
  -x OMPI_MCA_btl_vader_single_copy_mechanism -x MPIX_TRIGGER -x MPIX_GPU_DIRECT_ANNOUNCE \
  build-old/test/gpu/gpu_pipeline "*device buffers*" > $out/hostfn_diag.txt 2>&1 &
sleep 12
D=$(command -v gdb || command -v cuda-gdb); log "debugger: ${D:-none}"
nvidia-smi > $out/hostfn_smi.txt 2>&1
for p in $(pgrep -f build-old/test/gpu/gpu_pipeline); do
  for t in /proc/$p/task/*; do echo "$t $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack 2> /dev/null | head -8; done > $out/hostfn_tasks_$p.txt 2>&1
  [ -n "$D" ] && timeout 25 $D -p $p -batch -ex "info cuda kernels" -ex "thread apply all bt" > $out/hostfn_gdb_$p.txt 2>&1 &
done
wait; log "hostfn diag done"
