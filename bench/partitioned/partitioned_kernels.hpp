// The compute kernel of bench/partitioned (partitioned_kernels.cu), behind a host function.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "mpix/mpix.h"

namespace pbench {

// One block per partition: block b waits until (b + 1) * compute_ns / parts nanoseconds after
// it started (partitions finish at staggered times; 0: no waiting), then writes its
// part_bytes of @p buf with @p round and, when @p preq is not null, marks the partition ready
// with the device MPIX_Pready. Thread 0 adds the duration of each MPIX_Pready call to
// pready_ns[0] and 1 to pready_ns[1] (device memory), when @p pready_ns is not null.
cudaError_t compute(void *buf, std::size_t part_bytes, int parts, uint64_t compute_ns, int round,
                    MPIX_Prequest preq, unsigned long long *pready_ns, cudaStream_t s);
cudaError_t load_kernels();

}  // namespace pbench
