// Kernels the GPU tests and benchmarks put on their streams (test_kernels.cu), behind plain
// host functions so that the test files compile with the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mpix_gpu_test {

// Byte i of a buffer filled for @p seed.
inline unsigned char pattern_byte(uint32_t seed, std::size_t i) {
  return static_cast<unsigned char>((i * 2654435761u) ^ (seed * 40503u) ^ (i >> 8));
}

// Fills @p n bytes at @p buf (device, managed or mapped host memory) with the pattern of @p seed.
cudaError_t fill_pattern(void *buf, std::size_t n, uint32_t seed, cudaStream_t s);
// Adds to *@p errors the number of bytes at @p buf that differ from the pattern of @p seed,
// and 1 to *@p checks (so the test can tell that every check ran). Both in device memory.
cudaError_t check_pattern(const void *buf, std::size_t n, uint32_t seed, unsigned long long *errors,
                          unsigned long long *checks, cudaStream_t s);
// One block spins for @p ns nanoseconds, then writes @p value to the @p n ints at @p buf.
cudaError_t slow_write(int *buf, std::size_t n, int value, uint64_t ns, cudaStream_t s);
// One thread reads buf[0] and buf[n-1] for @p ns nanoseconds and records the smallest and
// largest values seen in seen[0] / seen[1] (device memory).
cudaError_t slow_read(const int *buf, std::size_t n, uint64_t ns, int *seen, cudaStream_t s);
// Adds to *@p errors the number of ints at @p buf with buf[i] != base + step * i, and 1 to
// *@p checks. Counters in device memory.
cudaError_t check_ints(const int *buf, std::size_t n, int base, int step,
                       unsigned long long *errors, unsigned long long *checks, cudaStream_t s);
// An empty kernel (the benchmarks' "compute" before each send).
cudaError_t empty_kernel(cudaStream_t s);
// Loads these kernels into the current device's context now (CUDA_MODULE_LOADING=LAZY would
// otherwise load them at a first launch that can block behind a closed stream wait).
cudaError_t load_test_kernels();

}  // namespace mpix_gpu_test
