// The receiver's cache of GPU-direct mappings (ipc_path.hpp): which allocations of which sender
// processes this process has mapped with CUDA IPC, so that each is opened once.
//
// An entry is keyed by (sender host, sender pid, allocation start) and remembers the sender's
// buffer id: a sender that freed an allocation and made another at the same address sends a
// new buffer id, and the old mapping is retired — kept, not closed, since unmapping
// (cudaIpcCloseMemHandle) waits for the device, and a stream of this process may be waiting for
// the very agent that would close it. Retired mappings are closed with the cache (at
// MPI_Finalize, once the agent has stopped). CUDA maps an allocation at most once per process
// (cudaErrorAlreadyMapped): a re-made allocation whose IPC handle equals one already mapped
// reuses that mapping. No MPI and no device needed: unit-tested with a fake backend.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace mpix {

class IpcMapCache {
 public:
  // What identifies the sender's allocation (from its rendezvous header, IpcRts).
  struct Key {
    uint64_t host = 0;
    int64_t pid = 0;
    uint64_t base = 0;
    uint64_t buffer_id = 0;
    const unsigned char *handle = nullptr;  // 64 bytes
  };

  IpcMapCache() = default;
  IpcMapCache(const IpcMapCache &) = delete;
  IpcMapCache &operator=(const IpcMapCache &) = delete;
  ~IpcMapCache();  // closes every mapping once

  // The start of the allocation @p k in this process, on @p device of @p be, mapped now if it
  // is not yet.
  Status map(const Key &k, Backend *be, int device, char **base);

  // Held mappings of freed allocations (for the warning, and tests).
  std::size_t retired() const { return retired_.size(); }

 private:
  struct Mapping {
    uint64_t buffer_id = 0;
    char *base = nullptr;
    int device = -1;
    Backend *be = nullptr;
    unsigned char handle[64] = {};
  };
  const Mapping *same_memory(const unsigned char *handle, Backend *be, int device) const;

  std::map<std::tuple<uint64_t, int64_t, uint64_t>, Mapping> maps_;
  std::vector<Mapping> retired_;
};

}  // namespace mpix
