# Sourced by a device call's command.sh (docs/data/gpu-h200/session*/call*/command.sh), on the GPU
# machine, in the repository root with .devdeps carried (../shared/device/README.md). Gives:
#   out      the result folder ($OUT); everything under it comes back as results.tgz
#   log MSG  a time-stamped line in $out/steps.log (and on stdout)
#   left     true while fewer than $budget seconds (default 480) have passed
#   M        mpirun -np 2 with the CUDA MPS and mpix variables passed on (append "-x VAR" for more)
#   mps_restart        restarts CUDA MPS (a run killed by its timeout leaves it unusable)
#   gpu_tests [REGEX]  every ctest of label gpu (but those REGEX matches), one at a time, 60 s
#                      each, while left: $out/ctest_gpu.log and ctest_summary.txt, one log line
#   build_old TARGET.. builds the tree in old/ into build-old (Release, CUDA), only TARGETs, for an
#                      old/new comparison in one call. The device's copy of the checkout has no
#                      git history to archive from: make old/ here first (git archive REV | tar x
#                      -C old; rm -r old/docs), list /old/ in .git/info/exclude and pass it in
#                      the run's carry list.
# and on sourcing: records the machine, starts CUDA MPS (one GPU: the two ranks share it), builds
# build-gpu (Release, CUDA, sm_90) and, at exit, stops MPS and packs $out into results.tgz.
out=${OUT:?set OUT to the result folder}
budget=${budget:-480}
source .devdeps/on-device.sh > /dev/null
export OMPI_MCA_btl_vader_single_copy_mechanism=none CUDA_MODULE_LOADING=EAGER
log() { echo "[+${SECONDS}s] $*" | tee -a "$out/steps.log"; }
left() { [ "$SECONDS" -lt "$budget" ]; }
device_finish() {
  echo quit | nvidia-cuda-mps-control 2> /dev/null
  cd "$out" && tar czf /tmp/results.tgz . && rm -rf ./* && mv /tmp/results.tgz results.tgz
}
trap device_finish EXIT
{ date -u; nvidia-smi -L; nproc; } > "$out/machine.txt" 2>&1
if [ "$(nvidia-smi -L 2> /dev/null | wc -l)" -eq 1 ]; then
  nvidia-cuda-mps-control -d && log "CUDA MPS started (one GPU)"
fi
[ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
  > "$out/configure.log" 2>&1
cmake --build build-gpu -j "$(nproc)" -- -k 0 > "$out/build.log" 2>&1 ||
  { grep -B3 -A12 FAILED "$out/build.log" | head -60; }
log "build done"
M=(mpirun -np 2 --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY
   -x CUDA_MODULE_LOADING -x OMPI_MCA_btl_vader_single_copy_mechanism)
mps_restart() {
  echo quit | nvidia-cuda-mps-control 2> /dev/null; sleep 2; pkill -9 -f build-gpu/ 2> /dev/null
  [ "$(nvidia-smi -L 2> /dev/null | wc -l)" -eq 1 ] && nvidia-cuda-mps-control -d && log "MPS restarted"
}
gpu_tests() {
  local skip=${1:-^$} t rc
  for t in $(ctest --test-dir build-gpu -N -L gpu | awk '/Test +#/{print $3}' | grep -Ev "$skip"); do
    left || break
    timeout -k 5 60 ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >> "$out/ctest_gpu.log" 2>&1
    rc=$?; echo "$t rc=$rc" >> "$out/ctest_summary.txt"; [ $rc -eq 0 ] || mps_restart
  done
  log "gpu tests: $(grep -c 'rc=0' "$out/ctest_summary.txt") of $(grep -c . "$out/ctest_summary.txt") passed"
}
build_old() {
  [ -d old ] || { log "build_old: no old/ (carry it)"; return 1; }
  cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
    -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
    cmake --build build-old -j "$(nproc)" --target "$@" > "$out/build_old.log" 2>&1
  local rc=$?; log "old built rc=$rc"; return $rc
}
