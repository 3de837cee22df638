// Probe, not built by CMake (nvcc -O2 -arch=sm_90 -ccbin mpicxx bench/cuda/probe_ipc_remap.cu
// -lcuda; mpirun -np 2): what CUDA IPC does when an exporter frees an allocation and makes
// another one over the same memory while the importer still has the first one mapped, and
// whether unmapping (cudaIpcCloseMemHandle) waits for work queued on the importer's streams.
//   1. rank 0 exports a 64 KiB allocation; rank 1 maps it.
//   2. rank 0 frees it and allocates 1 MiB (often at the same address); rank 1 maps that.
//   3. rank 1 blocks a stream on a host word (cuStreamWaitValue32) that a thread sets 1.5 s
//      later, and times cudaIpcCloseMemHandle of the first mapping meanwhile; then maps the
//      second allocation again.
//   4. rank 0 makes two 64 KiB allocations (one CUDA block); rank 1 maps both and reports
//      what cuPointerGetAttributes says each mapping covers.
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

struct Export {
  cudaIpcMemHandle_t h;
  uint64_t ptr;
  uint64_t bytes;
};

void send_export(void *p, size_t bytes) {
  Export e{};
  cudaError_t rc = cudaIpcGetMemHandle(&e.h, p);
  if (rc != cudaSuccess) std::printf("rank 0: cudaIpcGetMemHandle: %s\n", cudaGetErrorName(rc));
  e.ptr = reinterpret_cast<uint64_t>(p);
  e.bytes = bytes;
  MPI_Send(&e, sizeof e, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
}

Export recv_export() {
  Export e{};
  MPI_Recv(&e, sizeof e, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return e;
}

void *open_export(const Export &e, const char *what) {
  void *p = nullptr;
  auto t = Clock::now();
  cudaError_t rc = cudaIpcOpenMemHandle(&p, e.h, cudaIpcMemLazyEnablePeerAccess);
  const double us = us_since(t);
  if (rc != cudaSuccess) {
    std::printf("rank 1: open %s (exporter %#llx, %llu B): %s after %.1f us\n", what,
                (unsigned long long)e.ptr, (unsigned long long)e.bytes, cudaGetErrorName(rc), us);
    cudaGetLastError();
    return nullptr;
  }
  CUdeviceptr lo = 0;
  size_t n = 0;
  CUpointer_attribute a[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                              CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void *d[2] = {&lo, &n};
  cuPointerGetAttributes(2, a, d, reinterpret_cast<CUdeviceptr>(p));
  std::printf("rank 1: open %s (exporter %#llx, %llu B): ok at %p in %.1f us; range %#llx + %zu\n",
              what, (unsigned long long)e.ptr, (unsigned long long)e.bytes, p, us,
              (unsigned long long)lo, n);
  return p;
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ndev = 1;
  cudaGetDeviceCount(&ndev);
  cudaSetDevice(rank % ndev);
  cudaFree(nullptr);
  if (size != 2) {
    if (rank == 0) std::printf("run with 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    void *a = nullptr, *b = nullptr, *c1 = nullptr, *c2 = nullptr;
    cudaMalloc(&a, 64 << 10);
    send_export(a, 64 << 10);
    barrier();  // rank 1 mapped a
    cudaFree(a);
    cudaMalloc(&b, 1 << 20);
    std::printf("rank 0: 64 KiB at %p freed, 1 MiB at %p (%s address)\n", a, b,
                a == b ? "same" : "another");
    send_export(b, 1 << 20);
    barrier();  // rank 1 done with b
    cudaMalloc(&c1, 64 << 10);
    cudaMalloc(&c2, 64 << 10);
    send_export(c1, 64 << 10);
    send_export(c2, 64 << 10);
    barrier();
    cudaFree(b);
    cudaFree(c1);
    cudaFree(c2);
  } else {
    Export ea = recv_export();
    void *pa = open_export(ea, "64 KiB");
    barrier();
    Export eb = recv_export();
    void *pb = open_export(eb, "1 MiB (64 KiB one still mapped)");
    void *pa2 = open_export(ea, "64 KiB again (same handle)");
    if (pa2 && pa2 == pa) {
      std::printf("rank 1: the same handle mapped twice gives the same address\n");
      cudaIpcCloseMemHandle(pa2);
    }
    // A stream of this process waits on a host word a thread sets 1.5 s from now.
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    uint32_t *word = nullptr;
    cudaHostAlloc(reinterpret_cast<void **>(&word), 64, cudaHostAllocMapped);
    *word = 0;
    CUdeviceptr dword = 0;
    cudaHostGetDevicePointer(reinterpret_cast<void **>(&dword), word, 0);
    CUresult cr =
        cuStreamWaitValue32(reinterpret_cast<CUstream>(s), dword, 1, CU_STREAM_WAIT_VALUE_GEQ);
    if (cr != CUDA_SUCCESS) std::printf("rank 1: cuStreamWaitValue32 failed: %d\n", (int)cr);
    const auto t0 = Clock::now();
    std::thread setter([word] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      reinterpret_cast<std::atomic<uint32_t> *>(word)->store(1);
    });
    if (pa) {
      auto t = Clock::now();
      cudaError_t rc = cudaIpcCloseMemHandle(pa);
      std::printf(
          "rank 1: close 64 KiB mapping while a stream waits: %s in %.1f us "
          "(the stream is released at 1.5e6 us)\n",
          cudaGetErrorName(rc), us_since(t));
    }
    if (!pb) pb = open_export(eb, "1 MiB after closing the 64 KiB one");
    const double before_sync = us_since(t0);
    cudaStreamSynchronize(s);
    std::printf(
        "rank 1: all above done %.1f us after the stream blocked; stream released at "
        "%.1f us\n",
        before_sync, us_since(t0));
    setter.join();
    barrier();
    Export ec1 = recv_export();
    Export ec2 = recv_export();
    void *p1 = open_export(ec1, "64 KiB c1");
    void *p2 = open_export(ec2, "64 KiB c2 (same block as c1?)");
    if (p1 && p2)
      std::printf("rank 1: c2 - c1 = %lld here, %lld at the exporter\n",
                  (long long)(static_cast<char *>(p2) - static_cast<char *>(p1)),
                  (long long)(ec2.ptr - ec1.ptr));
    std::printf("rank 1: handles of c1 and c2 %s\n",
                std::memcmp(&ec1.h, &ec2.h, sizeof ec1.h) ? "differ" : "are equal");
    barrier();
    if (pb) cudaIpcCloseMemHandle(pb);
    if (p1) cudaIpcCloseMemHandle(p1);
    if (p2 && p2 != p1) cudaIpcCloseMemHandle(p2);
  }
  MPI_Finalize();
  return 0;
}
