// Session 30 call 3 probe (not project code): what one pointer classification costs, by the
// runtime's cudaPointerGetAttributes (mpix's CudaApi::classify today) and by the driver's
// cuPointerGetAttributes asking only memory type, managed flag and device ordinal. Two
// processes under MPS, as mpix's benchmarks run; each times 200,000 calls per pointer kind.
// Build: nvcc -O2 -arch=sm_90 -ccbin mpicxx ptrq.cu -o ptrq -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

static double ns_per(int n, auto &&f) {
  for (int i = 0; i < 1000; ++i) f();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  cudaSetDevice(0);
  void *dev = nullptr, *pinned = nullptr, *managed = nullptr;
  cudaMalloc(&dev, 1 << 20);
  cudaHostAlloc(&pinned, 1 << 20, cudaHostAllocPortable | cudaHostAllocMapped);
  cudaMallocManaged(&managed, 1 << 20);
  void *plain = std::malloc(1 << 20);
  const struct {
    const char *name;
    void *p;
  } ptrs[] = {{"device", static_cast<char *>(dev) + 4096},
              {"pinned", pinned},
              {"managed", managed},
              {"malloc", plain}};
  const int n = 200000;
  long sink = 0;
  for (int rep = 0; rep < 2; ++rep)
    for (auto &q : ptrs) {
      MPI_Barrier(MPI_COMM_WORLD);
      double rt = ns_per(n, [&] {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, q.p) != cudaSuccess) cudaGetLastError();
        sink += a.type + a.device;
      });
      MPI_Barrier(MPI_COMM_WORLD);
      double drv = ns_per(n, [&] {
        unsigned int type = 0, is_managed = 0;
        int ordinal = -1;
        CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void *d[3] = {&type, &is_managed, &ordinal};
        cuPointerGetAttributes(3, at, d, reinterpret_cast<CUdeviceptr>(q.p));
        sink += type + is_managed + ordinal;
      });
      MPI_Barrier(MPI_COMM_WORLD);
      double drv1 = ns_per(n, [&] {
        unsigned int type = 0;
        cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                              reinterpret_cast<CUdeviceptr>(q.p));
        sink += type;
      });
      std::printf(
          "rank %d rep %d %-8s cudaPointerGetAttributes %7.1f ns  cuPointerGetAttributes(3) %7.1f "
          "ns  cuPointerGetAttribute(type) %7.1f ns\n",
          rank, rep, q.name, rt, drv, drv1);
    }
  std::printf("rank %d sink %ld\n", rank, sink);
  MPI_Finalize();
}
