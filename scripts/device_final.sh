#!/bin/bash
# On the GPU machine (repository root, .devdeps carried; ../shared/device/README.md): one call
# that builds with CUDA, runs every gpu-labelled test alone under a time limit (CUDA MPS started
# when one GPU is shared by the ranks), then the latency benchmark D D and H H, within a budget.
# Results under $OUT. Usage: scripts/device_final.sh [per-test limit s] [budget s]
set -u
limit=${1:-30}
budget=${2:-480}
out=${OUT:?set OUT to the result folder}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
{ date -u; nvidia-smi -L; git log -1 --oneline 2>/dev/null; } > "$out/machine.txt" 2>&1
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -eq 1 ]; then
  nvidia-cuda-mps-control -d && log "CUDA MPS started (one GPU)"
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" -- -k 0 > "$out/build.log" 2>&1 ||
  { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}'); do
  left || { echo "$t skipped (budget)" >> "$out/ctest_summary.txt"; continue; }
  timeout -k 5 "$limit" ctest --test-dir build-gpu -R "^$t\$" --output-on-failure \
    >> "$out/ctest_gpu.log" 2>&1
  echo "$t rc=$?" >> "$out/ctest_summary.txt"
  pkill -9 -f build-gpu/test 2>/dev/null; pkill -9 -f build-gpu/examples 2>/dev/null
  sleep 0.5  # under MPS a killed test's clients take a moment to go; the next one may fail early
done
log "gpu tests done: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
mr=(mpirun -np 2 --bind-to none)
bench() {  # name, VAR=value, mpix_latency arguments...
  local name=$1 env1=$2; shift 2
  left || { log "skipped $name (budget)"; return; }
  log "bench $name"
  echo "# $env1 mpirun -np 2 --bind-to none build-gpu/bench/mpix_latency $*" > "$out/$name.txt"
  timeout -k 5 60 env "$env1" "${mr[@]}" build-gpu/bench/mpix_latency "$@" \
    --json "$out/$name.json" >> "$out/$name.txt" 2>&1 || log "  $name exited $?"
}
# The kernel before each send writes the message and the receiver checks it (DESIGN.md §7).
B=(-d cuda -m 8:4194304 -i 300 -x 30 --set kernel=write)
bench lat_DD_enqueue_staged MPIX_GPU_DIRECT=off "${B[@]}" --buffers "D D" --mode enqueue
bench lat_DD_mpisync MPIX_GPU_DIRECT=off "${B[@]}" --buffers "D D" --mode mpi-sync
bench lat_DD_enqueue_direct MPIX_GPU_DIRECT=auto "${B[@]}" --buffers "D D" --mode enqueue
bench lat_HH_enqueue MPIX_GPU_DIRECT=off "${B[@]}" --buffers "H H" --mode enqueue
bench lat_HH_mpisync MPIX_GPU_DIRECT=off "${B[@]}" --buffers "H H" --mode mpi-sync
# MPICH's own CUDA stream tests, where an MPICH source tree is at hand (test/mpich_compat).
if [ -n "${MPICH_SRC:-}" ] && left; then
  OUT=$out/mpich test/mpich_compat/run_mpich_stream_tests.sh build-gpu cuda \
    -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY 2>&1 | grep -E "PASS|FAIL" | tee -a "$out/steps.log"
fi
log done
# The device tool returns a limited number of files: the results travel as one archive.
(cd "$out" && tar czf results.tgz ./*.json ./*.txt ./*.log ./mpich 2>/dev/null &&
  rm -f ./*.json ./lat_*.txt ./ctest_gpu.log)
