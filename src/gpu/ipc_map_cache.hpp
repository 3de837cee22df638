// A cache of GPU-direct mappings (providers/mpi/ipc_path.hpp, partitioned/direct_link.hpp):
// which allocations of which other processes this process has mapped with CUDA IPC, so that
// each is opened once.
//
// An entry is keyed by (sender host, sender pid, allocation start) and remembers the sender's
// buffer id: a sender that freed an allocation and made another at the same address sends a
// new buffer id, and the old mapping is retired -- kept, not closed: unmapping
// (cudaIpcCloseMemHandle) waits until every stream of this process is idle (measured:
// bench/cuda/probe_ipc_remap.cu), and a stream of this process may be waiting for the very
// agent that would close it. Retired mappings are closed with the cache (at MPI_Finalize, once
// the agent has stopped).
//
// What CUDA does, measured on one H200 (probe_ipc_remap.cu): the CUDA allocator hands out
// small allocations as parts of one larger memory block; an importer maps the whole block
// once, and each allocation of it that it opens lies at the same distance from the others as
// in the exporter. Opening a handle of the same allocation again returns the same address.
// Opening a new allocation in a block this process maps is refused (cudaErrorAlreadyMapped,
// Backend::ipc_open's in_use) where it starts inside an allocation the exporter freed but this
// process still maps (the allocator reused the place). Where the message lies inside that old
// allocation, it is read through the old mapping, at the same distance as in the sender (the newest
// such mapping: an older one may be of a block the sender freed whose addresses it has used again).
// No MPI and no device needed: unit-tested with a fake backend that behaves as CUDA did.
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
    uint64_t lo = 0, hi = 0;  // the mapped allocation here (0, 0: unknown)
    uint64_t seq = 0;         // when it was made: the newest of several that fit is live
    bool owned = false;       // made by ipc_open (closed with the cache), not found in another
  };
  const Mapping *same_memory(const unsigned char *handle, Backend *be, int device) const;
  // The newest mapping of the same sender whose allocation held the bytes @p k's message
  // needs, and *@p at, where @p k's allocation starts here; null if none.
  const Mapping *covering(const Key &k, Backend *be, int device, char **at) const;

  std::map<std::tuple<uint64_t, int64_t, uint64_t>, Mapping> maps_;
  std::vector<Mapping> retired_;
  uint64_t made_ = 0;
};

}  // namespace mpix
