// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_chain.cu -lcuda): what one
// hop of a staged small-message exchange costs in stream time, per way of doing its copies.
// Every variant is a chain on one stream: released by the host (a word in pinned memory), it
// runs "user" kernel K (writes 8 bytes of device memory, as mpix_latency's kernel=write does)
// with the receive's copy in before it and the send's copy out after it, then tells the host (a
// word in pinned memory). The host times release -> told, with the chains queued ahead, so the
// stream sits at each release wait when the host writes it (mpix's "stream turnaround").
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CU(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      std::fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, int(r_)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

using u64 = unsigned long long;

__global__ void user_kernel(u64 *buf, u64 v) { buf[0] = v; }

__global__ void copy8(u64 *dst, const u64 *src) { dst[0] = src[0]; }

__global__ void wait_then_copy8(const volatile u64 *word, u64 value, u64 *dst, const u64 *src) {
  while (static_cast<long long>(*word - value) < 0) {
  }
  __threadfence_system();
  dst[0] = *reinterpret_cast<const volatile u64 *>(src);
}

__global__ void copy_then_store8(u64 *dst, const u64 *src, volatile u64 *word, u64 value) {
  dst[0] = src[0];
  __threadfence_system();
  *word = value;
}

__global__ void wait_word(const volatile u64 *word, u64 value) {
  while (static_cast<long long>(*word - value) < 0) {
  }
}

__global__ void store_word(volatile u64 *word, u64 value) {
  __threadfence_system();
  *word = value;
}

struct Bufs {
  u64 *rel, *told;       // pinned: host releases, stream tells
  u64 *hin, *hout;       // pinned bounce buffers
  u64 *din, *dout, *dk;  // device: receive buffer, send buffer (K writes it), K's buffer
};

enum class In {
  memop_wait,
  memop_wait_kernel,
  wait_kernel_copy,
  memop_wait_memcpy,
  none_kernel_wait
};
enum class Out {
  memop_write,
  kernel_copy_store,
  kernel_copy_memop_write,
  memcpy_memop_write,
  kernel_store
};

struct Variant {
  const char *name;
  In in;
  Out out;
};

void enqueue_chain(cudaStream_t s, CUstream cs, const Bufs &b, const Variant &v, u64 i) {
  switch (v.in) {
    case In::memop_wait:
      CU(cuStreamWaitValue64(cs, reinterpret_cast<CUdeviceptr>(b.rel), i,
                             CU_STREAM_WAIT_VALUE_GEQ));
      break;
    case In::memop_wait_kernel:
      CU(cuStreamWaitValue64(cs, reinterpret_cast<CUdeviceptr>(b.rel), i,
                             CU_STREAM_WAIT_VALUE_GEQ));
      copy8<<<1, 32, 0, s>>>(b.din, b.hin);
      break;
    case In::wait_kernel_copy:
      wait_then_copy8<<<1, 32, 0, s>>>(b.rel, i, b.din, b.hin);
      break;
    case In::memop_wait_memcpy:
      CU(cuStreamWaitValue64(cs, reinterpret_cast<CUdeviceptr>(b.rel), i,
                             CU_STREAM_WAIT_VALUE_GEQ));
      CK(cudaMemcpyAsync(b.din, b.hin, 8, cudaMemcpyHostToDevice, s));
      break;
    case In::none_kernel_wait:
      wait_word<<<1, 32, 0, s>>>(b.rel, i);
      break;
  }
  user_kernel<<<1, 32, 0, s>>>(b.dout, i);
  switch (v.out) {
    case Out::memop_write:
      CU(cuStreamWriteValue64(cs, reinterpret_cast<CUdeviceptr>(b.told), i, 0));
      break;
    case Out::kernel_copy_store:
      copy_then_store8<<<1, 32, 0, s>>>(b.hout, b.dout, b.told, i);
      break;
    case Out::kernel_copy_memop_write:
      copy8<<<1, 32, 0, s>>>(b.hout, b.dout);
      CU(cuStreamWriteValue64(cs, reinterpret_cast<CUdeviceptr>(b.told), i, 0));
      break;
    case Out::memcpy_memop_write:
      CK(cudaMemcpyAsync(b.hout, b.dout, 8, cudaMemcpyDeviceToHost, s));
      CU(cuStreamWriteValue64(cs, reinterpret_cast<CUdeviceptr>(b.told), i, 0));
      break;
    case Out::kernel_store:
      store_word<<<1, 32, 0, s>>>(b.told, i);
      break;
  }
}

int main(int argc, char **argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 5000;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUstream cs = reinterpret_cast<CUstream>(s);
  Bufs b{};
  CK(cudaHostAlloc(&b.rel, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostAlloc(&b.told, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostAlloc(&b.hin, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostAlloc(&b.hout, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaMalloc(&b.din, 64));
  CK(cudaMalloc(&b.dout, 64));
  CK(cudaMalloc(&b.dk, 64));
  const Variant vs[] = {
      {"H H: memop wait | K | memop write", In::memop_wait, Out::memop_write},
      {"mpix D D: wait+copy kernel | K | copy+store kernel", In::wait_kernel_copy,
       Out::kernel_copy_store},
      {"memop wait, copy kernel | K | copy+store kernel", In::memop_wait_kernel,
       Out::kernel_copy_store},
      {"memop wait, copy kernel | K | copy kernel, memop write", In::memop_wait_kernel,
       Out::kernel_copy_memop_write},
      {"memop wait, memcpy | K | memcpy, memop write", In::memop_wait_memcpy,
       Out::memcpy_memop_write},
      {"wait+copy kernel | K | memop write", In::wait_kernel_copy, Out::memop_write},
      {"memop wait | K | copy+store kernel", In::memop_wait, Out::kernel_copy_store},
      {"memop wait, copy kernel | K | memop write", In::memop_wait_kernel, Out::memop_write},
      {"memop wait, memcpy | K | memop write", In::memop_wait_memcpy, Out::memop_write},
      {"memop wait | K | memcpy, memop write", In::memop_wait, Out::memcpy_memop_write},
      {"wait kernel | K | store kernel", In::none_kernel_wait, Out::kernel_store},
  };
  u64 seq = 0;
  for (int rep = 0; rep < 2; ++rep) {
    for (const Variant &v : vs) {
      std::vector<double> us;
      const int warm = 200, batch = 64;  // a deeper queue blocks the enqueuing thread
      for (int done = 0; done < iters + warm; done += batch) {
        const int n = std::min(batch, iters + warm - done);
        const u64 first = seq + 1;
        for (int k = 0; k < n; ++k) enqueue_chain(s, cs, b, v, ++seq);
        for (u64 i = first; i <= seq; ++i) {
          // Let the stream reach the wait (it has been queued for a while by now).
          const auto t0 = std::chrono::steady_clock::now();
          __atomic_store_n(b.rel, i, __ATOMIC_SEQ_CST);
          while (__atomic_load_n(b.told, __ATOMIC_ACQUIRE) < i) {
          }
          const auto t1 = std::chrono::steady_clock::now();
          if (done + static_cast<int>(i - first) >= warm)
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
          // Give the stream time to park at the next wait.
          const auto park = std::chrono::steady_clock::now();
          while (std::chrono::steady_clock::now() - park < std::chrono::microseconds(20)) {
          }
        }
        CK(cudaStreamSynchronize(s));
      }
      std::sort(us.begin(), us.end());
      std::printf("%-58s median %6.2f us  p10 %6.2f  p90 %6.2f\n", v.name, us[us.size() / 2],
                  us[us.size() / 10], us[us.size() * 9 / 10]);
      std::fflush(stdout);
    }
  }
  return 0;
}
