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
// One round of the in-kernel ping-pong (mode in-kernel), one block per partition: the
// initiator writes partition b of @p sbuf, marks it with @p ps and waits in the same kernel
// until partition b of the reply arrived in @p rbuf (@p pr); the responder waits for it, checks
// it, writes and marks its reply. @p stats (device memory): [0] sum of the initiator's round
// trips in ns, [1] their count, [2] wrong partitions seen, [3] sum of MPIX_Pready's cost in ns.
cudaError_t pingpong(void *sbuf, const void *rbuf, std::size_t part_bytes, int parts, int round,
                     bool initiator, MPIX_Prequest ps, MPIX_Prequest pr, unsigned long long *stats,
                     cudaStream_t s);
cudaError_t load_kernels();

}  // namespace pbench
