// Pinned host bounce buffers for staged device memory (core/stager.hpp), pooled by size class
// (a power of two, or a power of two and a page) per backend; and device ones, per device, for
// GPU-direct sends whose own buffer cannot be exported (providers/mpi/ipc_path.hpp). A buffer goes
// back to the pool when its stager is destroyed, and is reused once nothing can touch it any more:
// at once, or once a stream's trigger word reaches a value (the stream has run its copy in from
// it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.hpp"

namespace mpix {

class Backend;

struct Bounce {
  Backend *be = nullptr;
  char *p = nullptr;
  std::size_t cap = 0;
  int device = -1;  // -1: pinned host memory; else device memory of that device
};

// A buffer of at least @p bytes from @p be's pinned memory (@p device -1) or from the memory of
// @p device, from the pool where one is free.
Status bounce_acquire(Backend *be, std::size_t bytes, Bounce *out, int device = -1);
// Back to the pool; reusable once *@p word reaches @p value (at once when @p word is null).
void bounce_release(const Bounce &b, const uint64_t *word, uint64_t value);

// Bounce buffers held by the pool (free or waiting for their stream) and in use, for tests.
struct StagingPoolStats {
  std::size_t cached = 0;
  std::size_t in_use = 0;
  std::size_t bytes = 0;
};
StagingPoolStats staging_pool_stats();

}  // namespace mpix
