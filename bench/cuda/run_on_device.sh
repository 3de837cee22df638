#!/bin/bash
# On the two-GPU machine: builds mpix with CUDA, runs the GPU benchmarks (mpix_latency and
# mpix_bw, -d cuda, "H H" and "D D") and the GPU tests; logs and JSON go to $OUT.
#   usage (repository root, .devdeps carried):  bench/cuda/run_on_device.sh [SRC_DIR]
# Every step has its own time limit and the whole run stops starting new steps after
# $BUDGET_S seconds, so that one stuck step cannot eat the device time.
set -u
src=${1:-.}
final=${OUT:?set OUT to the result folder}
budget=${BUDGET_S:-520}
source .devdeps/on-device.sh
export CUDA_MODULE_LOADING=EAGER OMPI_MCA_btl_vader_single_copy_mechanism=none
# Results are collected outside $OUT and packed into one archive there, whatever happens: the
# device run returns a limited number of files.
out=$(mktemp -d)
mkdir -p "$out/json" "$out/logs"
trap 'tar -C "$out" -czf "$final/results.tgz" . ; cp "$out/steps.log" "$final/" 2>/dev/null' EXIT
log() { echo "[$(date -u +%T) +${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }

{ date -u; hostname; nvidia-smi -L; nvidia-smi topo -m; nvcc --version | tail -2
  mpirun --version | head -1; } > "$out/machine.txt" 2>&1
log "configure"
cmake -S "$src" -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/logs/configure.log" 2>&1 ||
  { log "configure failed"; tail -30 "$out/logs/configure.log"; exit 1; }
log "build"
cmake --build build-gpu -j "$(nproc)" --target mpix mpix_info mpix_latency mpix_bw gpu_p2p \
  gpu_pipeline gpu_semantics > "$out/logs/build.log" 2>&1 ||
  { log "build failed"; grep -B3 -A15 FAILED "$out/logs/build.log" | head -80; exit 1; }
build-gpu/src/mpix_info > "$out/mpix_info.txt" 2>&1

mr=(mpirun -np 2 --bind-to none -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism
    -x MPIX_PROFILE)
# bench <latency|bw> <"H H"|"D D"> <mode> <tag> [extra args...]
bench() {
  local kind=$1 place=$2 mode=$3 tag=$4
  shift 4
  left || { log "skipped $kind $mode $place $tag (budget)"; return; }
  local p=${place// /}
  local name="${kind}_${mode}_${p}${tag:+_$tag}"
  local args=(-d cuda --buffers "$place" --mode "$mode" --json "$out/json/$name.json")
  if [ "$kind" = latency ]; then args+=(-m 8:4194304 -i 1000 -x 100); else args+=(-m 8:4194304 -i 20 -x 5); fi
  args+=("$@")  # later options win
  log "$name"
  echo "# command: mpirun -np 2 --bind-to none build-gpu/bench/mpix_$kind ${args[*]}" > "$out/logs/$name.txt"
  timeout 90 "${mr[@]}" build-gpu/bench/mpix_"$kind" "${args[@]}" >> "$out/logs/$name.txt" 2>&1 ||
    log "  $name exited $?"
}

export MPIX_PROFILE=0
for m in enqueue mpi-sync enqueue-hostfn enqueue-kernel; do bench latency "H H" $m ""; done
# Where the time goes: agent-side stage timings for 8 B enqueue ping-pongs.
MPIX_PROFILE=1 bench latency "H H" enqueue profile -m 8:8 -i 10000
MPIX_PROFILE=1 bench latency "D D" enqueue profile -m 8:8 -i 10000
# Host CPU time per MPIX_Isend_enqueue call.
bench latency "H H" isend-cpu "" -m 8:8 -i 20000
bench latency "D D" isend-cpu "" -m 8:8 -i 20000

if left; then
  log "tests"
  timeout 300 ctest --test-dir build-gpu -R '^gpu_' --output-on-failure --timeout 100 \
    > "$out/logs/ctest_gpu.log" 2>&1
  grep -E "FAILED|failed|REQUIRE|CHECK|with expansion|Error|error" -A3 "$out/logs/ctest_gpu.log" | head -60
  tail -22 "$out/logs/ctest_gpu.log"
fi

for m in enqueue mpi-sync enqueue-hostfn enqueue-kernel nccl; do bench latency "D D" $m ""; done
for m in enqueue mpi-sync; do bench latency "H H" $m writekernel --set kernel=write -m 8:65536; done
bench latency "D D" nccl writekernel --set kernel=write -m 8:65536
for m in enqueue mpi-sync enqueue-hostfn enqueue-kernel; do bench bw "H H" $m ""; done
for m in enqueue mpi-sync enqueue-hostfn enqueue-kernel nccl; do bench bw "D D" $m ""; done
log "done"
grep -h "profile\|isend-cpu" "$out"/logs/*.txt
for f in "$out"/logs/latency_*.txt; do echo "$(basename "$f" .txt): $(grep -E '^8 ' "$f")"; done
