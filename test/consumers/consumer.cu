// The CUDA-language consumer (scripts/consumers.sh; `LANGUAGES CXX CUDA`, no C): a kernel on a
// CUDA stream, then an enqueued send/receive on that stream. Built in CI; run on a GPU machine.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>

#include "mpix/mpix.h"

__global__ void fill(int *p, int n, int v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cudaStream_t cs;
  if (cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) != cudaSuccess) {
    if (rank == 0) std::printf("consumer (CUDA): no GPU, nothing run\n");
    MPI_Finalize();
    return 0;
  }
  const int n = 256;
  int *out = nullptr, *in = nullptr;
  cudaMallocHost(&out, n * sizeof(int));
  cudaMallocHost(&in, n * sizeof(int));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "cudaStream_t");
  MPIX_Info_set_hex(info, "value", &cs, sizeof cs);
  MPIX_Stream stream;
  int bad = MPIX_Stream_create(info, &stream) != MPI_SUCCESS;
  MPI_Info_free(&info);
  MPI_Comm comm;
  bad |= MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) != MPI_SUCCESS;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  fill<<<1, n, 0, cs>>>(out, n, rank * 1000);
  bad |= MPIX_Sendrecv_enqueue(out, n, MPI_INT, right, 0, in, n, MPI_INT, left, 0, comm,
                               MPI_STATUS_IGNORE) != MPI_SUCCESS;
  cudaStreamSynchronize(cs);
  for (int i = 0; i < n; ++i) bad |= in[i] != left * 1000 + i;
  MPI_Comm_free(&comm);
  MPIX_Stream_free(&stream);
  cudaFreeHost(out);
  cudaFreeHost(in);
  cudaStreamDestroy(cs);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("consumer (CUDA): %s\n", any ? "FAILED" : "ok");
  MPI_Finalize();
  return any;
}
