#include "mpix/mpix_device.h"
#include "partitioned_cuda_kernels.hpp"

namespace mpix_ptest {
namespace {

__global__ void produce_k(int *buf, int per, int round, MPIX_Prequest preq, int *errors) {
  const int p = blockIdx.x;
  for (int i = threadIdx.x; i < per; i += blockDim.x)
    buf[p * per + i] = expected(round, p * per + i);
  __syncthreads();  // the whole partition is written before one thread marks it
  if (threadIdx.x == 0 && MPIX_Pready(p, preq) != MPI_SUCCESS) atomicAdd(errors, 1);
}

__global__ void consume_k(const int *buf, int per, int round, MPIX_Prequest preq, int *good,
                          int *bad) {
  const int p = blockIdx.x;
  if (threadIdx.x == 0) {
    int flag = 0;
    while (!flag)
      if (MPIX_Parrived(preq, p, &flag) != MPI_SUCCESS) atomicAdd(bad, 1);
  }
  __syncthreads();
  int ok = 1;
  // __ldcv: read host memory again, never a line cached from an earlier round.
  for (int i = threadIdx.x; i < per; i += blockDim.x)
    ok &= __ldcv(&buf[p * per + i]) == expected(round, p * per + i);
  ok = __syncthreads_and(ok);
  if (threadIdx.x == 0) atomicAdd(ok ? good : bad, 1);
}

__global__ void misuse_k(MPIX_Prequest preq, int parts, int *rc) {
  rc[0] = MPIX_Pready(0, preq);
  rc[1] = MPIX_Pready(0, preq);
  rc[2] = MPIX_Pready(parts, preq);
  rc[3] = MPIX_Pready_range(1, parts - 1, preq);
}

__global__ void mark_k(MPIX_Prequest preq, int partition, int *rc) {
  *rc = MPIX_Pready(partition, preq);
}

__global__ void fill_k(int *buf, int n, int round) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    buf[i] = expected(round, i);
}

__global__ void check_k(const int *buf, int n, int round, int *bad, int *checks) {
  int wrong = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    wrong += __ldcv(&buf[i]) != expected(round, i);
  if (wrong) atomicAdd(bad, wrong);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(checks, 1);
}

}  // namespace

cudaError_t produce(int *buf, int parts, int per, int round, MPIX_Prequest preq, int *errors,
                    cudaStream_t s) {
  produce_k<<<parts, 256, 0, s>>>(buf, per, round, preq, errors);
  return cudaGetLastError();
}

cudaError_t consume(const int *buf, int parts, int per, int round, MPIX_Prequest preq, int *good,
                    int *bad, cudaStream_t s) {
  consume_k<<<parts, 256, 0, s>>>(buf, per, round, preq, good, bad);
  return cudaGetLastError();
}

cudaError_t misuse(MPIX_Prequest preq, int parts, int *rc, cudaStream_t s) {
  misuse_k<<<1, 1, 0, s>>>(preq, parts, rc);
  return cudaGetLastError();
}

cudaError_t mark(MPIX_Prequest preq, int partition, int *rc, cudaStream_t s) {
  mark_k<<<1, 1, 0, s>>>(preq, partition, rc);
  return cudaGetLastError();
}

cudaError_t fill(int *buf, int n, int round, cudaStream_t s) {
  fill_k<<<32, 256, 0, s>>>(buf, n, round);
  return cudaGetLastError();
}

cudaError_t check(const int *buf, int n, int round, int *bad, int *checks, cudaStream_t s) {
  check_k<<<32, 256, 0, s>>>(buf, n, round, bad, checks);
  return cudaGetLastError();
}

cudaError_t load_kernels() {
  cudaFuncAttributes a;
  for (const void *k : {(const void *)produce_k, (const void *)consume_k, (const void *)misuse_k,
                        (const void *)mark_k, (const void *)fill_k, (const void *)check_k}) {
    cudaError_t rc = cudaFuncGetAttributes(&a, k);
    if (rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
}

}  // namespace mpix_ptest
