// Every device allocation this process exported for same-node GPU-direct (its start, size,
// buffer id and CUDA IPC handle), kept for the process's life: a receiver keeps its mapping of an
// allocation until MPI_Finalize, also after the sender freed it (providers/mpi/ipc_path.hpp).
//
// CUDA refuses to map, or maps only partly, an allocation made where a freed one still mapped by
// the receiver lay (bench/cuda/probe_ipc_remap.cu). So a send buffer that overlaps an exported
// allocation other than its own is not exported itself: the stream copies it into a device
// bounce buffer of mpix's (core/staging/bounce_pool.hpp), and such a bounce buffer is itself
// never one that overlaps an export.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "base/status.hpp"

namespace mpix {

class Backend;

class IpcExports {
 public:
  // Whether [start, start + size) overlaps an exported allocation other than @p buffer_id.
  bool overlaps_other(uint64_t start, uint64_t size, uint64_t buffer_id);
  // The IPC handle of the allocation at @p start of @p size bytes with @p buffer_id
  // (Backend::ipc_handle the first time, and again once another allocation took its place).
  Status handle(uint64_t start, uint64_t size, uint64_t buffer_id, Backend *be,
                unsigned char (&out)[64]);

 private:
  struct Entry {
    uint64_t size = 0;
    uint64_t buffer_id = 0;
    unsigned char handle[64] = {};
  };
  std::mutex mu_;
  std::map<uint64_t, Entry> map_;
  uint64_t max_size_ = 0;
};

// The process's registry (never destroyed: used until the process exits).
IpcExports &ipc_exports();

// This host's name, hashed (never 0): with the pid, what names an exporting process.
uint64_t ipc_host_hash();

}  // namespace mpix
