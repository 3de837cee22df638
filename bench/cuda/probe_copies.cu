// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_copies.cu -o probe_copies):
// what N small device-to-device copies cost when an agent issues them on one side stream, as
// the GPU-direct receive of N partitions does. Per size and N: (a) N cudaMemcpyAsync then one
// stream synchronise; (b) one kernel that copies the N pieces listed in a pinned host table;
// (c) one copy, issue to done. Medians over the repetitions, µs; host = time to issue.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

struct Piece {
  char *dst;
  const char *src;
  unsigned long long len;
};

// One block per piece (grid-stride over pieces), 16-byte words where both ends allow.
__global__ void copy_list(const Piece *list, int n) {
  __shared__ Piece p;
  for (int i = blockIdx.x; i < n; i += gridDim.x) {
    __syncthreads();
    if (threadIdx.x == 0) p = list[i];
    __syncthreads();
    const Piece q = p;
    if ((reinterpret_cast<unsigned long long>(q.dst) | reinterpret_cast<unsigned long long>(q.src) |
         q.len) %
            16 ==
        0) {
      for (unsigned long long k = threadIdx.x; k < q.len / 16; k += blockDim.x)
        reinterpret_cast<uint4 *>(q.dst)[k] = reinterpret_cast<const uint4 *>(q.src)[k];
    } else {
      for (unsigned long long k = threadIdx.x; k < q.len; k += blockDim.x) q.dst[k] = q.src[k];
    }
  }
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::size_t total = 64ull << 20;
  char *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, total));
  CK(cudaMalloc(&b, total));
  Piece *table = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void **>(&table), 1024 * sizeof(Piece), cudaHostAllocMapped));
  copy_list<<<1, 256, 0, s>>>(table, 0);  // load the module
  CK(cudaStreamSynchronize(s));
  std::printf("%8s %5s %12s %12s %12s %12s %12s\n", "bytes", "N", "memcpy_all", "memcpy_host",
              "kernel_all", "kernel_host", "one_copy");
  for (std::size_t bytes : {64ul, 4096ul, 16384ul, 262144ul}) {
    for (int n : {1, 8, 64}) {
      std::vector<double> ma, mh, ka, kh, one;
      for (int r = 0; r < reps; ++r) {
        double t0 = now_us();
        for (int i = 0; i < n; ++i)
          CK(cudaMemcpyAsync(b + i * bytes, a + i * bytes, bytes, cudaMemcpyDeviceToDevice, s));
        double t1 = now_us();
        CK(cudaStreamSynchronize(s));
        double t2 = now_us();
        ma.push_back(t2 - t0);
        mh.push_back(t1 - t0);
        for (int i = 0; i < n; ++i) table[i] = Piece{b + i * bytes, a + i * bytes, bytes};
        t0 = now_us();
        copy_list<<<n, 256, 0, s>>>(table, n);
        t1 = now_us();
        CK(cudaStreamSynchronize(s));
        t2 = now_us();
        ka.push_back(t2 - t0);
        kh.push_back(t1 - t0);
        t0 = now_us();
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaStreamSynchronize(s));
        one.push_back(now_us() - t0);
      }
      std::printf("%8zu %5d %12.2f %12.2f %12.2f %12.2f %12.2f\n", bytes, n, median(ma), median(mh),
                  median(ka), median(kh), median(one));
    }
  }
  return 0;
}
