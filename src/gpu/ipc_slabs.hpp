// Device words a peer process maps with CUDA IPC: slabs of device memory, zeroed once, exported
// and never freed or reused, so that a peer's mapping of a word always reaches that word (a
// freed and re-made allocation could not be mapped again: gpu/ipc_exports.hpp). Process-wide and
// never destroyed, as the exports are. Users: a direct partitioned round's link slot
// (partitioned/direct_link.hpp) and a GPU-direct send's ready word (providers/mpi/ipc_ready.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.hpp"

namespace mpix {

class Backend;

// @p bytes of such memory on @p device of @p be: where, and in which exported slab.
struct IpcSlabPiece {
  uint64_t *words = nullptr;  // device address, 8-byte aligned, zero at first
  uint64_t slab_base = 0, slab_id = 0, slab_bytes = 0;
};

// Any thread. @p bytes: at most 64 KiB, rounded up to 8.
Status ipc_slab_take(Backend *be, int device, std::size_t bytes, IpcSlabPiece *out);

}  // namespace mpix
