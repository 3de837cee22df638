// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_call_cost.cu -lcuda): what
// each stream call an enqueue makes costs the calling host thread, in one process, with and
// without CUDA MPS (run it both ways): cuStreamWriteValue64, cuStreamWaitValue64 (already
// reached), cuStreamBatchMemOp of 2 and 8 operations, a kernel launch (1 block, empty), a
// kernel with mpix's copy kernels' parameters, the same empty kernel through cuLaunchKernel and
// through cuLaunchKernelEx (no attribute; programmatic stream serialization, as mpix's kernels
// go with MPIX_CUDA_PDL=on), a cudaLaunchHostFunc, a 8-byte cudaMemcpyAsync to pinned memory. Each
// call is issued N times in a row on one stream (the stream drained every 256 calls, outside the
// timing); printed: the median of 20 batches of the mean host time per call, µs. Issue 14's target
// is 1 µs per enqueue call on a GPU stream.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#define CK(x)                                                   \
  do {                                                          \
    auto e_ = (x);                                              \
    if (e_ != 0) {                                              \
      std::printf("%s failed: %d\n", #x, static_cast<int>(e_)); \
      return 1;                                                 \
    }                                                           \
  } while (0)

__global__ void empty_k() {}
// As mpix's copy kernels take: pointers, sizes, a value.
__global__ void params_k(char *dst, const char *src, unsigned long long n,
                         volatile unsigned long long *word, unsigned long long value) {
  if (n == 12345 && threadIdx.x == 0) {
    dst[0] = src[0];
    *word = value;
  }
}
void host_fn(void *) {}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long *word = nullptr, *host8 = nullptr;
  CK(cudaHostAlloc(&word, 64, cudaHostAllocMapped));
  CK(cudaHostAlloc(&host8, 64, cudaHostAllocMapped));
  void *dev8 = nullptr;
  CK(cudaMalloc(&dev8, 64));
  *word = 1;
  CUdeviceptr dword = 0;
  CK(cuMemHostGetDevicePointer(&dword, word, 0));
  unsigned long long value = 1;
  CUstreamBatchMemOpParams ops[8] = {};
  for (int i = 0; i < 8; ++i) {
    ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    ops[i].writeValue.address = dword + 8;
    ops[i].writeValue.value64 = 1;
  }
  CUfunction empty_fn = nullptr;
  CK(cudaGetFuncBySymbol(&empty_fn, reinterpret_cast<const void *>(empty_k)));
  struct Case {
    const char *name;
    std::function<int()> call;
  };
  std::vector<Case> cases = {
      {"cuStreamWriteValue64",
       [&] { return static_cast<int>(cuStreamWriteValue64(s, dword + 8, ++value, 0)); }},
      {"cuStreamWaitValue64 (reached)",
       [&] {
         return static_cast<int>(cuStreamWaitValue64(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
       }},
      {"cuStreamBatchMemOp, 2 ops",
       [&] { return static_cast<int>(cuStreamBatchMemOp(s, 2, ops, 0)); }},
      {"cuStreamBatchMemOp, 8 ops",
       [&] { return static_cast<int>(cuStreamBatchMemOp(s, 8, ops, 0)); }},
      {"kernel launch (1 block, empty)",
       [&] {
         empty_k<<<1, 32, 0, s>>>();
         return static_cast<int>(cudaGetLastError());
       }},
      {"kernel launch (1 block of 256, 5 parameters)",
       [&] {
         params_k<<<1, 256, 0, s>>>(static_cast<char *>(dev8), static_cast<const char *>(dev8), 8,
                                    word + 2, 1);
         return static_cast<int>(cudaGetLastError());
       }},
      {"cuLaunchKernel (driver API, empty)",
       [&] {
         return static_cast<int>(
             cuLaunchKernel(empty_fn, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr));
       }},
      {"cuLaunchKernelEx (empty, no attribute)",
       [&] {
         CUlaunchConfig cfg{};
         cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
         cfg.blockDimX = 32;
         cfg.blockDimY = cfg.blockDimZ = 1;
         cfg.hStream = s;
         return static_cast<int>(cuLaunchKernelEx(&cfg, empty_fn, nullptr, nullptr));
       }},
      {"cuLaunchKernelEx (empty, PDL)",
       [&] {
         CUlaunchAttribute attr{};
         attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
         attr.value.programmaticStreamSerializationAllowed = 1;
         CUlaunchConfig cfg{};
         cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
         cfg.blockDimX = 32;
         cfg.blockDimY = cfg.blockDimZ = 1;
         cfg.hStream = s;
         cfg.attrs = &attr;
         cfg.numAttrs = 1;
         return static_cast<int>(cuLaunchKernelEx(&cfg, empty_fn, nullptr, nullptr));
       }},
      {"cudaLaunchHostFunc",
       [&] { return static_cast<int>(cudaLaunchHostFunc(s, host_fn, nullptr)); }},
      {"cudaMemcpyAsync 8 B device to pinned",
       [&] {
         return static_cast<int>(cudaMemcpyAsync(host8, dev8, 8, cudaMemcpyDeviceToHost, s));
       }},
  };
  std::printf("# call | host us per call (median of 20 batches of 256)\n");
  for (Case &c : cases) {
    std::vector<double> per;
    for (int rep = 0; rep < 21; ++rep) {
      CK(cudaStreamSynchronize(s));
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 256; ++i) CK(c.call());
      const auto t1 = std::chrono::steady_clock::now();
      if (rep) per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 256);
    }
    std::sort(per.begin(), per.end());
    std::printf("%-40s %7.2f\n", c.name, per[per.size() / 2]);
  }
  CK(cudaStreamSynchronize(s));
  return 0;
}
