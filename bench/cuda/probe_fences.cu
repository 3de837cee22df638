// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_fences.cu): what one
// device MPIX_Pready's parts cost in one thread right after its block wrote a partition: the
// fences (acq_rel / sc, GPU / system scope), loads of device and pinned host words (relaxed,
// acquire, plain), dependent loads like a descriptor's pointer then its target, and a store to
// host memory followed by a GPU-scope fence. Single loads take their address from a kernel
// parameter; the "desc" modes load it from a descriptor in device memory first. Each kernel launch
// times the step once in thread 0 of each block (globaltimer ns and clock64 cycles), as MPIX_Pready
// runs once per partition. Prints the mean over launches per mode and block count.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define CK(x)                                              \
  do {                                                     \
    cudaError_t e_ = (x);                                  \
    if (e_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                            \
    }                                                      \
  } while (0)

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint64_t ld_rlx_sys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ld_acq_sys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ld_acq_gpu(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_rlx_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

struct Desc {       // a descriptor in device memory, like mpix_prequest_s
  uint64_t *round;  // device word
  uint64_t *marks;  // device words
  uint64_t *host;   // pinned host words
};

const char *const kModes[] = {
    "timer only",
    "fence.acq_rel.gpu",
    "fence.sc.gpu (__threadfence)",
    "fence.acq_rel.sys",
    "fence.sc.sys (__threadfence_system)",
    "ld.relaxed.sys device word",
    "ld.acquire.gpu device word",
    "ld.acquire.sys device word",
    "ld.relaxed.sys pinned host word",
    "desc field -> ld.relaxed.sys target (2 dependent)",
    "desc fields -> 2 loads -> fence.acq_rel.gpu -> 2 stores (Pready-like)",
    "st.relaxed.sys host, then fence.acq_rel.gpu",
    "st.release.gpu device word",
    "fence.release.gpu",
    "fence.release.gpu -> desc fields -> 2 loads -> 2 stores (Pready-like, fence first)",
    "desc fields -> 2 loads -> st.release.gpu + st.relaxed.sys",
};
constexpr int kNumModes = sizeof(kModes) / sizeof(kModes[0]);

__global__ void step(int mode, uint4 *part, Desc w, const Desc *desc, uint64_t *sink,
                     unsigned long long *acc) {
  const int b = blockIdx.x;
  part[b * 64 + (threadIdx.x & 1)] = make_uint4(b, mode, 1, 2);  // the partition's writes
  __syncthreads();
  if (threadIdx.x) return;
  uint64_t v = 0;
  const uint64_t c0 = clock64(), t0 = now_ns();
  switch (mode) {
    case 1:
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
      break;
    case 2:
      __threadfence();
      break;
    case 3:
      asm volatile("fence.acq_rel.sys;" ::: "memory");
      break;
    case 4:
      __threadfence_system();
      break;
    case 5:
      v = ld_rlx_sys(w.round);
      break;
    case 6:
      v = ld_acq_gpu(w.round);
      break;
    case 7:
      v = ld_acq_sys(w.round);
      break;
    case 8:
      v = ld_rlx_sys(w.host + b);
      break;
    case 9:
      v = ld_rlx_sys(desc->marks + b);
      break;
    case 10: {
      const uint64_t g = ld_rlx_sys(desc->round), old = ld_rlx_sys(desc->marks + b);
      if (old > g + 1000) v = 1;
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
      st_rlx_sys(desc->marks + b, g + 1);
      st_rlx_sys(desc->host + b, g + 1);
      break;
    }
    case 11:
      st_rlx_sys(w.host + b, 7);
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
      break;
    case 12:
      asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(w.marks + b), "l"(1ull) : "memory");
      break;
    case 13:
      asm volatile("fence.release.gpu;" ::: "memory");
      break;
    case 14: {
      asm volatile("fence.release.gpu;" ::: "memory");
      const uint64_t g = ld_rlx_sys(desc->round), old = ld_rlx_sys(desc->marks + b);
      if (old > g + 1000) v = 1;
      st_rlx_sys(desc->marks + b, g + 1);
      st_rlx_sys(desc->host + b, g + 1);
      break;
    }
    case 15: {
      const uint64_t g = ld_rlx_sys(desc->round), old = ld_rlx_sys(desc->marks + b);
      if (old > g + 1000) v = 1;
      asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(desc->marks + b), "l"(g + 1) : "memory");
      st_rlx_sys(desc->host + b, g + 1);
      break;
    }
    default:
      break;
  }
  const uint64_t t1 = now_ns(), c1 = clock64();
  sink[b] = v;
  atomicAdd(&acc[0], t1 - t0);
  atomicAdd(&acc[1], c1 - c0);
  atomicAdd(&acc[2], 1ull);
}

int main() {
  uint4 *part;
  uint64_t *dwords, *sink, *host;
  unsigned long long *acc;
  Desc *desc;
  CK(cudaMalloc(&part, 64 * 64 * sizeof(uint4)));
  CK(cudaMalloc(&dwords, 128 * sizeof(uint64_t)));
  CK(cudaMemset(dwords, 0, 128 * sizeof(uint64_t)));
  CK(cudaMalloc(&sink, 64 * sizeof(uint64_t)));
  CK(cudaMalloc(&acc, 3 * sizeof(unsigned long long)));
  CK(cudaMalloc(&desc, sizeof(Desc)));
  CK(cudaHostAlloc(&host, 64 * sizeof(uint64_t), cudaHostAllocMapped));
  const Desc d{dwords, dwords + 64, host};
  CK(cudaMemcpy(desc, &d, sizeof d, cudaMemcpyHostToDevice));
  std::printf("# mode | blocks | ns per step (globaltimer) | cycles per step (clock64)\n");
  for (int mode = 0; mode < kNumModes; ++mode) {
    for (int blocks : {1, 64}) {
      CK(cudaMemset(acc, 0, 3 * sizeof(unsigned long long)));
      for (int i = 0; i < 2000; ++i) step<<<blocks, 512>>>(mode, part, d, desc, sink, acc);
      CK(cudaDeviceSynchronize());
      unsigned long long a[3];
      CK(cudaMemcpy(a, acc, sizeof a, cudaMemcpyDeviceToHost));
      std::printf("%-70s | %2d | %7.1f | %7.1f\n", kModes[mode], blocks,
                  static_cast<double>(a[0]) / a[2], static_cast<double>(a[1]) / a[2]);
    }
  }
  return 0;
}
