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

// One round of the in-kernel ping-pong, block b on partition b. The initiator writes its
// partition, marks it ready and waits, in the same kernel, until the reply's partition b
// arrived; the responder waits for partition b, checks it, writes its reply and marks it.
// stats: [0] sum of the initiator's round trips (ns, Pready to Parrived), [1] their count,
// [2] partitions whose data was wrong, [3] sum of MPIX_Pready's cost (ns).
// Partitions are written and checked in 8-byte words {round, b}, so one may be 8 bytes.
__global__ void pingpong_k(int2 *sbuf, const int2 *rbuf, std::size_t part_words, int round,
                           bool initiator, MPIX_Prequest ps, MPIX_Prequest pr,
                           unsigned long long *stats) {
  const int b = blockIdx.x;
  __shared__ uint64_t t0;
  const int2 v = make_int2(round, b);
  auto arrive = [&] {
    if (threadIdx.x == 0) {
      int f = 0;
      while (!f) MPIX_Parrived(pr, b, &f);
    }
    __syncthreads();
    bool bad = false;
    for (std::size_t i = threadIdx.x; i < part_words; i += blockDim.x) {
      const int2 w = rbuf[b * part_words + i];
      bad |= w.x != v.x || w.y != v.y;
    }
    if (bad) atomicAdd(&stats[2], 1ull);
  };
  auto send = [&] {
    for (std::size_t i = threadIdx.x; i < part_words; i += blockDim.x) sbuf[b * part_words + i] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      t0 = now_ns();
      MPIX_Pready(b, ps);
      atomicAdd(&stats[3], static_cast<unsigned long long>(now_ns() - t0));
    }
  };
  if (initiator) {
    send();
    arrive();
    if (threadIdx.x == 0) {
      atomicAdd(&stats[0], static_cast<unsigned long long>(now_ns() - t0));
      atomicAdd(&stats[1], 1ull);
    }
  } else {
    arrive();
    __syncthreads();
    send();
  }
}

}  // namespace

cudaError_t pingpong(void *sbuf, const void *rbuf, std::size_t part_bytes, int parts, int round,
                     bool initiator, MPIX_Prequest ps, MPIX_Prequest pr, unsigned long long *stats,
                     cudaStream_t s) {
  pingpong_k<<<parts, 512, 0, s>>>(static_cast<int2 *>(sbuf), static_cast<const int2 *>(rbuf),
                                   part_bytes / sizeof(int2), round, initiator, ps, pr, stats);
  return cudaGetLastError();
}

cudaError_t compute(void *buf, std::size_t part_bytes, int parts, uint64_t compute_ns, int round,
                    MPIX_Prequest preq, unsigned long long *pready_ns, cudaStream_t s) {
  compute_k<<<parts, 512, 0, s>>>(static_cast<int4 *>(buf), part_bytes / sizeof(int4), parts,
                                  compute_ns, round, preq, pready_ns);
  return cudaGetLastError();
}

cudaError_t load_kernels() {
  cudaFuncAttributes a;
  cudaError_t rc = cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(compute_k));
  return rc != cudaSuccess ? rc
                           : cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(pingpong_k));
}

}  // namespace pbench
