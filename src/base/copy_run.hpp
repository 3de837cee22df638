// One strided run of a datatype's typemap (core/typemap.hpp): `count` blocks of `len` bytes,
// the first `offset` bytes from a base address, each `stride` bytes after the previous one
// (stride 0 when count is 1). Staging copies by tables of runs, and a GPU backend may read a
// table from a kernel (gpu/backend.hpp).
#pragma once

#include <cstdint>

namespace mpix {

struct CopyRun {
  uint64_t offset;
  uint64_t len;
  uint64_t stride;
  uint64_t count;
};
static_assert(sizeof(CopyRun) == 32, "CopyRun tables are read by device code");

// One copy of a list a GPU backend's kernel runs in one launch (Backend::agent_copy_deferred):
// `len` bytes from device address `src` to `dst`.
struct CopyPiece {
  uint64_t dst;
  uint64_t src;
  uint64_t len;
  uint64_t unused;
};
static_assert(sizeof(CopyPiece) == 32, "CopyPiece tables are read by device code");

}  // namespace mpix
