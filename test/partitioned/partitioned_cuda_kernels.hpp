// Kernels of the CUDA partitioned and queue tests (partitioned_cuda_kernels.cu), behind plain
// host functions so that the Catch2 test file compiles with the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include "mpix/mpix.h"

#ifdef __CUDACC__
#define MPIX_PTEST_HD __host__ __device__
#else
#define MPIX_PTEST_HD
#endif

namespace mpix_ptest {

// The value element i of a buffer holds in round @p round.
MPIX_PTEST_HD inline int expected(int round, int i) { return round * 1000003 + i; }

// One block per send partition (@p per ints each): writes its partition for @p round, then
// calls the device MPIX_Pready; failed calls are counted in *errors (device memory).
cudaError_t produce(int *buf, int parts, int per, int round, MPIX_Prequest preq, int *errors,
                    cudaStream_t s);
// One block per receive partition: polls the device MPIX_Parrived, then checks the partition;
// counts good and bad partitions in *good / *bad (device memory).
cudaError_t consume(const int *buf, int parts, int per, int round, MPIX_Prequest preq, int *good,
                    int *bad, cudaStream_t s);
// One thread: MPIX_Pready(0), MPIX_Pready(0) again, MPIX_Pready(parts) (out of range), then
// MPIX_Pready_range(1, parts - 1); the four return codes go to rc[0..3] (device memory).
cudaError_t misuse(MPIX_Prequest preq, int parts, int *rc, cudaStream_t s);
// One thread: MPIX_Pready(@p partition); its return code goes to *rc (device memory).
cudaError_t mark(MPIX_Prequest preq, int partition, int *rc, cudaStream_t s);
// Whole-buffer fill and check (queue test): *bad counts wrong elements, *checks the runs.
cudaError_t fill(int *buf, int n, int round, cudaStream_t s);
cudaError_t check(const int *buf, int n, int round, int *bad, int *checks, cudaStream_t s);
// Loads these kernels now: with lazy module loading a first launch can block behind a closed
// stream wait (DESIGN.md §7).
cudaError_t load_kernels();

}  // namespace mpix_ptest
