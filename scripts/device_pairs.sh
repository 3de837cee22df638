#!/bin/bash
# A device call (carry .devdeps): why several rank pairs on one GPU slow mpix down. Builds
# mpix_latency (CUDA) and bench/cuda/probe_pairs.cu, starts CUDA MPS, then for 2, 4 and 8 ranks
# (pairs 0-1, 2-3, ..., 8 B, kernel writes the message, host buffers):
#   probe_npN_auto.txt        probe, all four modes, default host wait (auto = spin), relay spins
#   probe_npN_block.txt       probe, all four modes, --host-wait block
#   probe_npN_block_pause.txt probe gpu-memop, gpu-spin: host wait block, relay polls with pause
#   probe_np8_yield.txt       probe gpu-memop, gpu-spin, host-sync: host wait yield, relay yields
#   lat_{enqueue,mpisync}_{spin,block}_npN.txt  mpix_latency --host-wait spin|block
#   profile_enqueue_np8.txt (and np2)           MPIX_PROFILE=1 enqueue: agent stage medians
# summary.txt collects the result lines; steps.log the timeline; machine.txt GPU and CPUs.
# Usage (repository root): scripts/device_pairs.sh [budget for the runs, s (default 200)]
set -u
out=${OUT:?set OUT to the result folder}
budget=${1:-200}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
{ date -u; nvidia-smi -L; git log -1 --oneline; nproc; lscpu | grep -E \
  'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node'; } > "$out/machine.txt" 2>&1
nvidia-cuda-mps-control -d && log "MPS started"
trap 'echo quit | nvidia-cuda-mps-control' EXIT
mkdir -p build-gpu
nvcc -O2 -arch=sm_90 -ccbin mpicxx -DOMPI_SKIP_MPICXX bench/cuda/probe_pairs.cu \
  -o build-gpu/probe_pairs -lcuda \
  > "$out/probe_build.log" 2>&1 &
probe_build=$!
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" --target mpix_latency > "$out/build.log" 2>&1 ||
  { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
wait $probe_build || { log "probe build failed"; tail -20 "$out/probe_build.log"; }
log "build done"
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$budget" ]; }
M=(-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
run() {  # name, np, extra env (or -), program and args
  local name=$1 np=$2 env1=$3; shift 3
  left || { log "skipped $name (budget)"; return; }
  echo "# np=$np $env1 $*" > "$out/$name.txt"
  local e=(env)
  [ "$env1" = - ] || e+=("$env1")
  local x=()
  [ "$env1" = - ] || x=(-x "${env1%%=*}")
  timeout -k 5 60 "${e[@]}" mpirun -np "$np" --bind-to none "${M[@]}" "${x[@]}" "$@" \
    >> "$out/$name.txt" 2>&1 || log "  $name exited $?"
}
P=(build-gpu/probe_pairs -i 5000 -x 500)
L=(build-gpu/bench/mpix_latency -d cuda --set kernel=write --buffers "H H" -m 8:8 -i 2000 -x 200)
for np in 2 4 8; do
  log "np $np"
  run probe_np${np}_auto $np - "${P[@]}"
  run probe_np${np}_block $np - "${P[@]}" --host-wait block
  run probe_np${np}_block_pause $np - "${P[@]}" --host-wait block --relay pause \
    --modes gpu-memop,gpu-spin
  for w in spin block; do
    run lat_enqueue_${w}_np$np $np - "${L[@]}" --mode enqueue --host-wait $w
    run lat_mpisync_${w}_np$np $np - "${L[@]}" --mode mpi-sync --host-wait $w
  done
done
run profile_enqueue_np8 8 MPIX_PROFILE=1 "${L[@]}" --mode enqueue
run probe_np8_yield 8 - "${P[@]}" --host-wait yield --relay yield \
  --modes gpu-memop,gpu-spin,host-sync
run profile_enqueue_np2 2 MPIX_PROFILE=1 "${L[@]}" --mode enqueue
log "runs done ($((SECONDS - start)) s)"
{
  echo "# probe: one line per mode (one-way us mean / slowest pair, CPU per rank, csw)"
  for f in "$out"/probe_np*.txt; do
    grep -E '^(gpu|host)' "$f" | sed "s|^|$(basename "$f" .txt): |"
  done
  echo "# mpix_latency 8 B one-way us (slowest pair)"
  for f in "$out"/lat_*.txt; do
    echo "$(basename "$f" .txt): $(awk '$1 == 8 {print $2}' "$f") $(grep -o 'host wait: .*' "$f")"
  done
  for f in "$out"/profile_enqueue_np*.txt; do
    echo "# $(basename "$f" .txt): MPIX_PROFILE=1 stage medians per rank; 8 B one-way us: \
$(awk '$1 == 8 {print $2}' "$f")"
    grep -h 'profile:' "$f" | sort -t'[' -k2 -n
  done
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
