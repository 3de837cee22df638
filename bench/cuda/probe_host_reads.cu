// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_host_reads.cu): do reads of
// pinned host memory by many blocks serialise, and does it depend on whether the blocks read the
// same word, the same line, or different lines? Each block's thread 0 does `reps` dependent
// ld.relaxed.sys loads of its word and times them.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint64_t ld_sys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_rel_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void reads(const uint64_t *base, size_t stride_words, int reps, uint64_t *ns,
                      uint64_t *sink) {
  if (threadIdx.x) return;
  const uint64_t *p = base + blockIdx.x * stride_words;
  uint64_t acc = 0;
  const uint64_t t0 = now_ns();
  for (int i = 0; i < reps; ++i) acc += ld_sys(p + (acc & 0));  // dependent chain
  ns[blockIdx.x] = (now_ns() - t0) / reps;
  sink[blockIdx.x] = acc;
}

// Pready-like: one block writes `bytes` of its partition (in host or device memory), then a
// release store of its flag in host memory; time of the release store alone.
__global__ void write_then_release(char *data, size_t bytes, uint64_t *flags, size_t stride_words,
                                   uint64_t *ns) {
  char *d = data + blockIdx.x * bytes;
  for (size_t i = threadIdx.x * 16; i < bytes; i += blockDim.x * 16)
    *reinterpret_cast<int4 *>(d + i) = make_int4(1, 2, 3, 4);
  __syncthreads();
  if (threadIdx.x) return;
  const uint64_t t0 = now_ns();
  st_rel_sys(flags + blockIdx.x * stride_words, 1);
  ns[blockIdx.x] = now_ns() - t0;
}

#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                           \
    }                                                     \
  } while (0)

int main() {
  uint64_t *host = nullptr, *ns = nullptr, *sink = nullptr;
  CK(cudaHostAlloc(&host, 1 << 22, cudaHostAllocMapped));
  for (int i = 0; i < (1 << 19); ++i) host[i] = 0;
  CK(cudaMallocManaged(&ns, 1024 * sizeof(uint64_t)));
  CK(cudaMalloc(&sink, 1024 * sizeof(uint64_t)));
  uint64_t *dev = nullptr;
  CK(cudaMalloc(&dev, 1 << 22));
  CK(cudaMemset(dev, 0, 1 << 22));
  std::printf("# reads of pinned host memory: ns per dependent ld.relaxed.sys, per block\n");
  std::printf("# %-6s %-12s %10s %10s\n", "blocks", "stride(B)", "mean", "max");
  const int blocks[] = {1, 8, 64, 128};
  const size_t strides[] = {0, 8, 64, 128, 4096};
  for (int mem = 0; mem < 2; ++mem)
    for (int b : blocks)
      for (size_t s : strides) {
        if (b == 1 && s) continue;
        for (int warm = 0; warm < 2; ++warm) {
          reads<<<b, 32>>>(mem ? dev : host, s / 8, 20, ns, sink);
          CK(cudaDeviceSynchronize());
        }
        double sum = 0, mx = 0;
        for (int i = 0; i < b; ++i) {
          sum += ns[i];
          if (ns[i] > mx) mx = ns[i];
        }
        std::printf("  %-4s %-6d %-12zu %10.0f %10.0f\n", mem ? "dev" : "host", b, s, sum / b, mx);
      }
  std::printf("# st.release.sys after writing the block's partition: ns of the store alone\n");
  std::printf("# %-5s %-6s %-10s %10s %10s\n", "data", "blocks", "bytes", "mean", "max");
  char *hdata = nullptr;
  CK(cudaHostAlloc(&hdata, 64 << 20, cudaHostAllocMapped));
  char *ddata = nullptr;
  CK(cudaMalloc(&ddata, 64 << 20));
  for (int mem = 0; mem < 2; ++mem)
    for (int b : {1, 64})
      for (size_t bytes : {size_t(32), size_t(4096), size_t(131072)}) {
        for (int warm = 0; warm < 2; ++warm) {
          write_then_release<<<b, 512>>>(mem ? ddata : hdata, bytes, host, 16, ns);
          CK(cudaDeviceSynchronize());
        }
        double sum = 0, mx = 0;
        for (int i = 0; i < b; ++i) {
          sum += ns[i];
          if (ns[i] > mx) mx = ns[i];
        }
        std::printf("  %-5s %-6d %-10zu %10.0f %10.0f\n", mem ? "dev" : "host", b, bytes, sum / b,
                    mx);
      }
  return 0;
}
