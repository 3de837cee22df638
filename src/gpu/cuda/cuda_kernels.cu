// The `kernel` trigger mode: 1-thread kernels that store a signal word or spin until one is
// reached. Used where the stream cannot carry memory operations (devices without them, streams
// being captured) and when asked for with mpix_trigger=kernel / MPIX_TRIGGER=kernel.
#include "gpu/cuda/cuda_api.hpp"

namespace mpix {
namespace {

// Earlier kernels on the stream have finished before this one starts; the fences make their
// writes, and ours, visible to the host before the host can see the new value.
__global__ void store_word(volatile unsigned long long *word, unsigned long long value) {
  __threadfence_system();
  *word = value;
  __threadfence_system();
}

// The cyclic comparison of CU_STREAM_WAIT_VALUE_GEQ, so both modes agree on what "reached" is.
__global__ void wait_word(const volatile unsigned long long *word, unsigned long long value) {
  while (static_cast<long long>(*word - value) < 0) {
  }
  __threadfence_system();
}

}  // namespace

Status CudaApi::kernel_write(stream_t s, uint64_t dev_word, uint64_t value) {
  store_word<<<1, 1, 0, s>>>(reinterpret_cast<unsigned long long *>(dev_word), value);
  MPIX_CUDA_CHECK(cudaGetLastError());
  return {};
}

Status CudaApi::kernel_wait(stream_t s, uint64_t dev_word, uint64_t value) {
  wait_word<<<1, 1, 0, s>>>(reinterpret_cast<const unsigned long long *>(dev_word), value);
  MPIX_CUDA_CHECK(cudaGetLastError());
  return {};
}

Status CudaApi::load_kernels() {
  cudaFuncAttributes a;
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, store_word));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, wait_word));
  return {};
}

}  // namespace mpix
