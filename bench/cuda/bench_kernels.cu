// Kernels the GPU benchmark modes launch before each send: an empty one, and one that writes
// the message (the "compute" that produced it). With --set launch=pdl they go as programmatic
// dependents of the kernel before them (compute capability 9.0 and later), as an application
// may launch the kernel that reads a received message: each waits for that kernel's end first.
#include "gpu_bench.hpp"

namespace bench {
namespace {

bool g_pdl = false;

// CUDA's own call, as an application would make it (it exists from compute capability 9.0).
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

__global__ void empty_k() { griddep_wait(); }

__global__ void write_k(unsigned char *b, std::size_t n, unsigned char v) {
  griddep_wait();
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    b[i] = v;
}

template <class... P, class... A>
cudaError_t launch(void (*k)(P...), unsigned blocks, unsigned threads, cudaStream_t s, A... args) {
  if (!g_pdl) {  // as before launch=pdl existed: the runtime's launch, no attribute
    k<<<blocks, threads, 0, s>>>(args...);
    return cudaGetLastError();
  }
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, k, static_cast<P>(args)...);
}

}  // namespace

void set_compute_pdl(bool on) { g_pdl = on; }

cudaError_t launch_compute(bool write, void *buf, std::size_t n, int iter, cudaStream_t s) {
  if (!write || n == 0) return launch(empty_k, 1, 1, s);
  std::size_t blocks = (n + 255) / 256;
  if (blocks > 1024) blocks = 1024;
  return launch(write_k, static_cast<unsigned>(blocks), 256, s, static_cast<unsigned char *>(buf),
                n, static_cast<unsigned char>(iter));
}

cudaError_t load_bench_kernels() {
  cudaFuncAttributes a;
  cudaError_t rc = cudaFuncGetAttributes(&a, empty_k);
  if (rc == cudaSuccess) rc = cudaFuncGetAttributes(&a, write_k);
  return rc;
}

}  // namespace bench
