set -u
source .devdeps/on-device.sh >/dev/null
export CUDA_MODULE_LOADING=EAGER OMPI_MCA_btl_vader_single_copy_mechanism=none
nvidia-cuda-mps-control -d
trap 'echo quit | nvidia-cuda-mps-control' EXIT
cd ${SRC:-.wt-ipc}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j 16 > $OUT/build.log 2>&1 || { grep -A10 FAILED $OUT/build.log | head -40; exit 1; }
for t in ${TESTS}; do
  timeout ${LIMIT:-90} ctest --test-dir build-gpu -R "^$t\$" --output-on-failure > $OUT/t_$t.log 2>&1
  echo "$t rc=$?"; pkill -9 -f build-gpu/test 2>/dev/null
done
