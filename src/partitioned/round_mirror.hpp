// Device copies of a partitioned request's round word (RoundMirror, prequest.hpp). A device
// MPIX_Pready reads the round from device memory: when many blocks read one word of host
// memory, the reads are served one after another (about 0.8 us each on one H200, 64 blocks:
// 50 us; bench/cuda/probe_host_reads.cu). Every write of the round word writes its copies too:
// in stream order for enqueued rounds, before the host call returns otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "partitioned/prequest.hpp"

namespace mpix {

// Appends a stream-ordered write of @p value to each copy of @p w's round word.
void round_mirrors_append(PWords &w, uint64_t value, std::vector<StreamMemOp> *ops);
// Stores @p value to each copy of @p w's round word; returns once the device holds it.
Status round_mirrors_store(PWords &w, uint64_t value);
// Stores @p value to the device marks (PWords::dmarks) of partitions @p parts[0..n); returns
// once the device holds them.
Status device_marks_store(PWords &w, const int *parts, int n, uint64_t value);
// Copies @p n bytes from host memory to device memory of @p device with @p be (copy_sync: the
// backend's private non-blocking stream, so no user stream's wait holds it up) and returns
// once they are there.
Status device_write(Backend *be, int device, void *dst, const void *src, std::size_t n);

}  // namespace mpix
