// Compile check of mpix/mpix_device.h in HIP device code (CI has HIP headers but no AMD GPU,
// so this is compiled, not run): a producer and a consumer kernel using every device call.
#include <hip/hip_runtime.h>

#include "mpix/mpix_device.h"

__global__ void produce(int *buf, int per, MPIX_Prequest preq, int *rc) {
  for (int i = threadIdx.x; i < per; i += blockDim.x) buf[blockIdx.x * per + i] = i;
  __syncthreads();
  if (threadIdx.x == 0) rc[blockIdx.x] = MPIX_Pready(static_cast<int>(blockIdx.x), preq);
}

__global__ void produce_range(MPIX_Prequest preq, int n, int *rc) {
  rc[0] = MPIX_Pready_range(0, n - 1, preq);
}

__global__ void consume(const int *buf, int per, MPIX_Prequest preq, int *sum) {
  if (threadIdx.x == 0) {
    int flag = 0;
    while (!flag) MPIX_Parrived(preq, static_cast<int>(blockIdx.x), &flag);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < per; i += blockDim.x) atomicAdd(sum, buf[blockIdx.x * per + i]);
}
