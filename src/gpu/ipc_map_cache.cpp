#include "gpu/ipc_map_cache.hpp"

#include <cstring>
#include <set>

#include "base/log.hpp"

namespace mpix {

IpcMapCache::~IpcMapCache() {
  // Each mapping once: a re-made allocation with the same handle shares its old mapping.
  std::set<char *> closed;
  auto close = [&](const Mapping &m) {
    if (m.owned && closed.insert(m.base).second) m.be->ipc_close(m.device, m.base);
  };
  for (auto &m : maps_) close(m.second);
  for (auto &m : retired_) close(m);
}

const IpcMapCache::Mapping *IpcMapCache::same_memory(const unsigned char *handle, Backend *be,
                                                     int device) const {
  auto same = [&](const Mapping &m) {
    return m.base && m.be == be && m.device == device &&
           std::memcmp(m.handle, handle, sizeof m.handle) == 0;
  };
  for (const auto &m : maps_)
    if (same(m.second)) return &m.second;
  for (const Mapping &m : retired_)
    if (same(m)) return &m;
  return nullptr;
}

const IpcMapCache::Mapping *IpcMapCache::covering(const Key &k, Backend *be, int device,
                                                  char **at) const {
  const Mapping *best = nullptr;
  auto fits = [&](const Mapping &m) {
    if (!m.base || m.be != be || m.device != device || m.host != k.host || m.pid != k.pid ||
        m.hi == 0 || k.base < m.sender_base)
      return;
    const uint64_t p = reinterpret_cast<uint64_t>(m.base) + (k.base - m.sender_base);
    if (p < m.lo || p >= m.hi || m.hi - p < k.extent) return;
    if (best && best->seq > m.seq) return;
    best = &m;
    *at = reinterpret_cast<char *>(p);
  };
  for (const auto &e : maps_) fits(e.second);
  for (const Mapping &m : retired_) fits(m);
  return best;
}

Status IpcMapCache::map(const Key &k, Backend *be, int device, char **base) {
  Mapping &m = maps_[std::make_tuple(k.host, k.pid, k.base)];
  if (m.base && m.buffer_id != k.buffer_id) {
    MPIX_LOG(debug, "mpi", "GPU-direct: allocation at %#llx of process %lld was re-made",
             static_cast<unsigned long long>(k.base), static_cast<long long>(k.pid));
    retired_.push_back(m);
    if (retired_.size() == 64)
      MPIX_LOG(warn, "mpi",
               "GPU-direct: 64 mappings of device buffers that their senders "
               "freed are held until MPI_Finalize (a code that frees and re-allocates its "
               "communication buffers; allocate them once to avoid it)");
    m = Mapping{};
  }
  if (!m.base) {
    uint64_t lo = 0, hi = 0;
    if (const Mapping *old = same_memory(k.handle, be, device)) {
      m.base = old->base;  // the sender's allocator handed the same memory out again
      lo = old->lo;
      hi = old->hi;
    } else {
      void *p = nullptr;
      unsigned char h[64];
      std::memcpy(h, k.handle, sizeof h);
      bool in_use = false;
      Status st = be->ipc_open(device, h, &p, &in_use);
      if (!st.is_ok()) {
        // Mapped here already, as part of an allocation the sender freed?
        char *in = nullptr;
        const Mapping *holder = in_use ? covering(k, be, device, &in) : nullptr;
        if (!holder) {
          maps_.erase(std::make_tuple(k.host, k.pid, k.base));
          return st;
        }
        MPIX_LOG(debug, "mpi",
                 "GPU-direct: allocation at %#llx of process %lld lies in memory mapped here "
                 "already",
                 static_cast<unsigned long long>(k.base), static_cast<long long>(k.pid));
        p = in;
        lo = holder->lo;
        hi = holder->hi;
      } else {
        uint64_t size = 0;
        if (be->ipc_mapped_range(p, &lo, &size).is_ok()) hi = lo + size;
        m.owned = true;
      }
      m.base = static_cast<char *>(p);
    }
    m.buffer_id = k.buffer_id;
    m.device = device;
    m.be = be;
    std::memcpy(m.handle, k.handle, sizeof m.handle);
    m.host = k.host;
    m.pid = k.pid;
    m.sender_base = k.base;
    m.lo = lo;
    m.hi = hi;
    m.seq = ++made_;
  }
  *base = m.base;
  return {};
}

}  // namespace mpix
