#include "mpix/mpix_device.h"
#include "partitioned_kernels.hpp"

namespace pbench {
namespace {

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void compute_k(int4 *buf, std::size_t part_int4, int parts, uint64_t compute_ns,
                          int round, MPIX_Prequest preq, unsigned long long *pready_ns) {
  const int b = blockIdx.x;
  if (compute_ns) {
    const uint64_t until = now_ns() + (b + 1) * compute_ns / parts;
    while (now_ns() < until) {
    }
  }
  int4 v = make_int4(round, b, round, b);
  for (std::size_t i = threadIdx.x; i < part_int4; i += blockDim.x) buf[b * part_int4 + i] = v;
  if (!preq) return;
  __syncthreads();  // the partition is written before thread 0 marks it
  if (threadIdx.x == 0) {
    const uint64_t t0 = now_ns();
    MPIX_Pready(b, preq);
    const uint64_t t1 = now_ns();
    if (pready_ns) {
      atomicAdd(&pready_ns[0], static_cast<unsigned long long>(t1 - t0));
      atomicAdd(&pready_ns[1], 1ull);
    }
  }
}

}  // namespace

cudaError_t compute(void *buf, std::size_t part_bytes, int parts, uint64_t compute_ns, int round,
                    MPIX_Prequest preq, unsigned long long *pready_ns, cudaStream_t s) {
  compute_k<<<parts, 512, 0, s>>>(static_cast<int4 *>(buf), part_bytes / sizeof(int4), parts,
                                  compute_ns, round, preq, pready_ns);
  return cudaGetLastError();
}

cudaError_t load_kernels() {
  cudaFuncAttributes a;
  return cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(compute_k));
}

}  // namespace pbench
