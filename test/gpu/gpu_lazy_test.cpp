// Lazily loaded user kernels (issue 13 item 3): started with CUDA_MODULE_LOADING unset (CUDA's
// default is LAZY), a rank enqueues a receive and its wait on a stream, then launches one of its
// own kernels — never launched before — behind it, and only then lets the peer send. With lazy
// loading that launch may wait for the context, and so for the stream's wait, which the peer
// releases only after the launch returned: a hang. mpix asks for eager loading when it is
// loaded, so the program must finish; a watchdog names the stage if it does not.
// Own main: nothing may load or launch the kernel before the test does.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mpix/mpix.h"
#include "watchdog.hpp"

cudaError_t lazy_probe(const int *buf, std::size_t n, int want, unsigned long long *bad,
                       cudaStream_t s);

using namespace mpix_gpu_test;

namespace {
#define CHECKED(expr, ok)                                        \
  do {                                                           \
    if (!(ok)) {                                                 \
      std::fprintf(stderr, "rank %d: %s failed\n", rank, #expr); \
      MPI_Abort(MPI_COMM_WORLD, 2);                              \
    }                                                            \
  } while (0)
#define CUDA_OK(expr) CHECKED(expr, (expr) == cudaSuccess)
#define MPI_OK(expr) CHECKED(expr, (expr) == MPI_SUCCESS)
}  // namespace

int main(int argc, char **argv) {
  // What the environment said when main started (libmpix's load-time request already ran).
  const char *at_main = std::getenv("CUDA_MODULE_LOADING");
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ndev = 0;
  const cudaError_t rc = cudaGetDeviceCount(&ndev);
  int have = rc == cudaSuccess && ndev > 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all || size < 2) {
    if (!have) std::printf("SKIP: rank %d has no usable CUDA device\n", rank);
    MPI_Finalize();
    return 77;
  }
  if (provided != MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) std::printf("CUDA_MODULE_LOADING at main(): %s\n", at_main ? at_main : "(unset)");
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  CUDA_OK(cudaSetDevice(local % ndev));
  Watchdog dog(Watchdog::seconds_from_env("MPIX_TEST_WATCHDOG_S", 120), rank);

  cudaStream_t cs;
  CUDA_OK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "cudaStream_t");
  MPI_OK(MPIX_Info_set_hex(info, "value", &cs, sizeof cs));
  MPIX_Stream stream;
  MPI_OK(MPIX_Stream_create(info, &stream));
  MPI_Info_free(&info);
  MPI_Comm comm;
  MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm));

  const int n = 4096, value = 777;
  int *buf = nullptr;
  unsigned long long *bad = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&buf), n * sizeof(int)));
  CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&bad), sizeof *bad));
  CUDA_OK(cudaMemset(bad, 0, sizeof *bad));
  int failures = 0;
  if (rank == 1) {
    CUDA_OK(cudaMemset(buf, 0, n * sizeof(int)));
    CUDA_OK(cudaDeviceSynchronize());
    watchdog_stage("enqueuing the receive and its wait");
    MPI_Request r;
    MPI_OK(MPIX_Irecv_enqueue(buf, n, MPI_INT, 0, 1, comm, &r));
    MPI_OK(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE));
    watchdog_stage(
        "first launch of the program's own kernel, behind the enqueued wait "
        "(hangs here if the kernel is loaded lazily)");
    CUDA_OK(lazy_probe(buf, n, value, bad, cs));
    watchdog_stage("barrier after the launch (the peer sends after it)");
    MPI_Barrier(MPI_COMM_WORLD);
    watchdog_stage("waiting for the stream");
    MPI_OK(MPIX_Stream_synchronize(stream));
    unsigned long long b = 1;
    CUDA_OK(cudaMemcpy(&b, bad, sizeof b, cudaMemcpyDeviceToHost));
    if (b != 0) {
      std::fprintf(stderr, "rank 1: FAILED: the kernel saw %llu wrong ints\n", b);
      ++failures;
    }
  } else if (rank == 0) {
    std::vector<int> v(n, value);
    CUDA_OK(cudaMemcpy(buf, v.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    watchdog_stage("sender in the barrier");
    MPI_Barrier(MPI_COMM_WORLD);
    watchdog_stage("sending");
    MPI_OK(MPIX_Send_enqueue(buf, n, MPI_INT, 1, 1, comm));
    MPI_OK(MPIX_Stream_synchronize(stream));
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  watchdog_stage("finishing");
  MPI_OK(MPI_Comm_free(&comm));
  MPI_OK(MPIX_Stream_free(&stream));
  cudaFree(buf);
  cudaFree(bad);
  cudaStreamDestroy(cs);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dog.disarm();
  if (rank == 0) std::printf("%s\n", worst ? "FAILED" : "passed");
  MPI_Finalize();
  return worst ? 1 : 0;
}
