#!/bin/bash
# On the two-GPU machine (kind nvidia-h200-x2), repository root, .devdeps carried:
#   bench/partitioned/run_on_device.sh
# Builds mpix with CUDA (only what this needs), runs the CUDA tests of queues and partitioned
# communication (ctest -L gpu -R partitioned_cuda) and bench/mpix_partitioned: a latency sweep
# (no compute) and the staggered-compute comparison. Logs and JSON go to $OUT. Each step has
# its own time limit. At most 8 files come back: machine, ctest log, and a .txt + .json per run.
set -u
out=${OUT:?set OUT to the result folder}
source .devdeps/on-device.sh
export CUDA_MODULE_LOADING=EAGER OMPI_MCA_btl_vader_single_copy_mechanism=none
# The agent polls GPU-written words: keep it from sleeping between the rounds of a sweep.
export MPIX_YIELD_US=10000000
log() { echo "[$(date -u +%T) +${SECONDS}s] $*"; }
{ date -u; hostname; nvidia-smi -L; nvidia-smi topo -m; nvcc --version | tail -2
  mpirun --version | head -1; nproc; } > "$out/machine.txt" 2>&1
log "configure"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DMPIX_ENABLE_OFI=OFF -DMPIX_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 ||
  { log "configure failed"; tail -30 /tmp/configure.log; exit 1; }
log "build"
timeout 240 cmake --build build-gpu -j "$(nproc)" --target partitioned_cuda mpix_partitioned \
  > /tmp/build.log 2>&1 || { log "build failed"; grep -B3 -A15 -E "FAILED|error" /tmp/build.log | head -60; exit 1; }
log "tests"
timeout 150 ctest --test-dir build-gpu -L gpu -R partitioned_cuda --output-on-failure \
  --timeout 140 > "$out/ctest_gpu.log" 2>&1
tail -15 "$out/ctest_gpu.log"
mr=(mpirun -np 2 --bind-to none -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism
    -x MPIX_YIELD_US build-gpu/bench/partitioned/mpix_partitioned)
log "latency sweep"
echo "# ${mr[*]} --label latency --json latency.json" > "$out/latency.txt"
timeout 120 "${mr[@]}" --label latency --json "$out/latency.json" >> "$out/latency.txt" 2>&1 ||
  log "latency sweep exited $?"
for c in 1000 4000; do
  log "staggered compute ${c} us"
  echo "# ${mr[*]} --sizes 1048576:16777216 --compute-us $c --label staggered-$c --json staggered_$c.json" \
    > "$out/staggered_$c.txt"
  timeout 90 "${mr[@]}" --sizes 1048576:16777216 --compute-us "$c" --label "staggered-$c" \
    --json "$out/staggered_$c.json" >> "$out/staggered_$c.txt" 2>&1 || log "staggered $c exited $?"
done
log "done"
cat "$out/latency.txt" "$out"/staggered_*.txt | grep -v "^#" | head -5
