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
// reuses that mapping. The CUDA allocator also hands out small allocations as parts of one
// larger block, which IPC maps whole: a second allocation of a block this process maps already
// (whose open fails, cudaErrorAlreadyMapped) is found inside an existing mapping of the same
// sender, at the same distance from that mapping's allocation as in the sender, where the
// mapped range (Backend::ipc_mapped_range) covers it (the newest such mapping: an older one may
// be of a block the sender freed whose addresses it has used again). No MPI and no device needed:
// unit-tested with a fake backend.
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
    uint64_t extent = 0;  // bytes from base the message needs (its offset + length)
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
    uint64_t host = 0;  // the sender, and where the allocation starts there
    int64_t pid = 0;
    uint64_t sender_base = 0;
    uint64_t lo = 0, hi = 0;  // what the mapping covers here (0, 0: unknown)
    uint64_t seq = 0;         // when it was made: the newest of several that fit is live
    bool owned = false;       // made by ipc_open (closed with the cache), not found inside one
  };
  const Mapping *same_memory(const unsigned char *handle, Backend *be, int device) const;
  // The mapping of another allocation of the same block that @p k's allocation lies in, and
  // *@p at, where it lies here; null if none.
  const Mapping *inside_block(const Key &k, Backend *be, int device, char **at) const;

  std::map<std::tuple<uint64_t, int64_t, uint64_t>, Mapping> maps_;
  std::vector<Mapping> retired_;
  uint64_t made_ = 0;
};

}  // namespace mpix
