#include "test_kernels.hpp"

namespace mpix_gpu_test {
namespace {

__device__ unsigned char dev_pattern(uint32_t seed, std::size_t i) {
  return static_cast<unsigned char>((i * 2654435761u) ^ (seed * 40503u) ^ (i >> 8));
}

__global__ void fill_k(unsigned char *b, std::size_t n, uint32_t seed) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    b[i] = dev_pattern(seed, i);
}

__global__ void check_k(const unsigned char *b, std::size_t n, uint32_t seed,
                        unsigned long long *errors, unsigned long long *checks) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    bad += b[i] != dev_pattern(seed, i);
  if (bad) atomicAdd(errors, bad);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(checks, 1ull);
}

__device__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void slow_write_k(int *buf, std::size_t n, int value, uint64_t ns) {
  if (threadIdx.x == 0) {
    uint64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
  }
  __syncthreads();
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) buf[i] = value;
  __threadfence_system();
}

__global__ void slow_read_k(const volatile int *buf, std::size_t n, uint64_t ns, int *seen) {
  int lo = buf[0], hi = buf[0];
  uint64_t end = now_ns() + ns;
  while (now_ns() < end) {
    int a = buf[0], b = buf[n - 1];
    lo = min(lo, min(a, b));
    hi = max(hi, max(a, b));
  }
  seen[0] = lo;
  seen[1] = hi;
}

__global__ void empty_k() {}

__global__ void check_ints_k(const int *b, std::size_t n, int base, int step,
                             unsigned long long *errors, unsigned long long *checks) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    bad += b[i] != base + step * static_cast<int>(i);
  if (bad) atomicAdd(errors, bad);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(checks, 1ull);
}

unsigned blocks_for(std::size_t n) {
  std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 1024 ? 1024 : b));
}

}  // namespace

cudaError_t fill_pattern(void *buf, std::size_t n, uint32_t seed, cudaStream_t s) {
  fill_k<<<blocks_for(n), 256, 0, s>>>(static_cast<unsigned char *>(buf), n, seed);
  return cudaGetLastError();
}

cudaError_t check_pattern(const void *buf, std::size_t n, uint32_t seed, unsigned long long *errors,
                          unsigned long long *checks, cudaStream_t s) {
  check_k<<<blocks_for(n), 256, 0, s>>>(static_cast<const unsigned char *>(buf), n, seed, errors,
                                        checks);
  return cudaGetLastError();
}

cudaError_t slow_write(int *buf, std::size_t n, int value, uint64_t ns, cudaStream_t s) {
  slow_write_k<<<1, 256, 0, s>>>(buf, n, value, ns);
  return cudaGetLastError();
}

cudaError_t slow_read(const int *buf, std::size_t n, uint64_t ns, int *seen, cudaStream_t s) {
  slow_read_k<<<1, 1, 0, s>>>(buf, n, ns, seen);
  return cudaGetLastError();
}

cudaError_t empty_kernel(cudaStream_t s) {
  empty_k<<<1, 1, 0, s>>>();
  return cudaGetLastError();
}

cudaError_t check_ints(const int *buf, std::size_t n, int base, int step,
                       unsigned long long *errors, unsigned long long *checks, cudaStream_t s) {
  check_ints_k<<<blocks_for(n), 256, 0, s>>>(buf, n, base, step, errors, checks);
  return cudaGetLastError();
}

cudaError_t load_test_kernels() {
  cudaFuncAttributes a;
  for (const void *f :
       {reinterpret_cast<const void *>(fill_k), reinterpret_cast<const void *>(check_k),
        reinterpret_cast<const void *>(slow_write_k), reinterpret_cast<const void *>(slow_read_k),
        reinterpret_cast<const void *>(empty_k), reinterpret_cast<const void *>(check_ints_k)}) {
    cudaError_t rc = cudaFuncGetAttributes(&a, f);
    if (rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
}

}  // namespace mpix_gpu_test
