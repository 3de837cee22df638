// The lazy-loading test's own kernel: in its own file and launched nowhere else, so that the
// test's launch of it behind an enqueued receive is the first use of its module.
#include <cuda_runtime_api.h>

#include <cstddef>

__global__ void lazy_probe_k(const int *buf, std::size_t n, int want, unsigned long long *bad) {
  unsigned long long b = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    b += buf[i] != want;
  if (b) atomicAdd(bad, b);
}

cudaError_t lazy_probe(const int *buf, std::size_t n, int want, unsigned long long *bad,
                       cudaStream_t s) {
  lazy_probe_k<<<4, 256, 0, s>>>(buf, n, want, bad);
  return cudaGetLastError();
}
