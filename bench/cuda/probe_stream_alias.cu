// Probe, not built by CMake (nvcc -O2 -arch=sm_90 bench/cuda/probe_stream_alias.cu -lcuda):
// does work on one CUDA stream wait behind a stream memory wait on ANOTHER stream (the streams
// sharing a hardware work queue)? Stream A blocks on a host word (cuStreamWaitValue32). Then,
// one after the other, 40 streams B_i are created (every 4th of the greatest priority, when
// "prio" is given) and each gets a device-to-device copy and an event; after 200 ms the probe
// reports which events have not completed (their copies queued behind A's wait), then releases
// A. CUDA_DEVICE_MAX_CONNECTIONS and CUDA MPS change the answer: run it under each.
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  const bool prio = argc > 1 && std::strcmp(argv[1], "prio") == 0;
  setvbuf(stdout, nullptr, _IONBF, 0);  // the lines come out even if a later call hangs
  const int n = 40;
  cudaFree(nullptr);
  int least = 0, greatest = 0;
  cudaDeviceGetStreamPriorityRange(&least, &greatest);
  const char *conn = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf("CUDA_DEVICE_MAX_CONNECTIONS=%s, priorities %d..%d, %s\n", conn ? conn : "(unset)",
              least, greatest, prio ? "every 4th B of the greatest priority" : "default priority");
  uint32_t *word = nullptr;
  cudaHostAlloc(reinterpret_cast<void **>(&word), 64, cudaHostAllocMapped);
  *word = 0;
  CUdeviceptr dword = 0;
  cudaHostGetDevicePointer(reinterpret_cast<void **>(&dword), word, 0);
  void *src = nullptr, *dst = nullptr;
  cudaMalloc(&src, 1 << 20);
  cudaMalloc(&dst, 1 << 20);
  cudaStream_t a;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  if (cuStreamWaitValue32(reinterpret_cast<CUstream>(a), dword, 1, CU_STREAM_WAIT_VALUE_GEQ) !=
      CUDA_SUCCESS)
    std::printf("cuStreamWaitValue32 failed\n");
  std::vector<cudaStream_t> b(n);
  std::vector<cudaEvent_t> ev(n);
  for (int i = 0; i < n; ++i) {
    if (prio && i % 4 == 0) cudaStreamCreateWithPriority(&b[i], cudaStreamNonBlocking, greatest);
    else cudaStreamCreateWithFlags(&b[i], cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming);
    cudaMemcpyAsync(dst, src, 4096, cudaMemcpyDeviceToDevice, b[i]);
    cudaEventRecord(ev[i], b[i]);
    if (i % 10 == 9) std::printf("B0..B%d queued\n", i);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::printf("blocked behind A's wait:");
  int blocked = 0;
  for (int i = 0; i < n; ++i)
    if (cudaEventQuery(ev[i]) == cudaErrorNotReady) {
      std::printf(" B%d%s", i, prio && i % 4 == 0 ? "(prio)" : "");
      ++blocked;
    }
  std::printf("%s (%d of %d)\n", blocked ? "" : " none", blocked, n);
  reinterpret_cast<std::atomic<uint32_t> *>(word)->store(1);
  cudaDeviceSynchronize();
  std::printf("released; all done: %s\n", cudaGetErrorName(cudaGetLastError()));
  return 0;
}
