#include "gpu/ipc_slabs.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/backend.hpp"

namespace mpix {
namespace {

constexpr std::size_t kSlabBytes = 64 * 1024;

// The slab pieces are taken from now, per (backend, device).
struct Slabs {
  struct Slab {
    char *base = nullptr;
    uint64_t id = 0;
    std::size_t used = 0;
  };
  std::mutex mu;
  std::map<std::pair<Backend *, int>, Slab> current;
};
Slabs &slabs() {
  static auto *s = new Slabs;
  return *s;
}

}  // namespace

Status ipc_slab_take(Backend *be, int device, std::size_t bytes, IpcSlabPiece *out) {
  bytes = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t) * sizeof(uint64_t);
  if (bytes == 0 || bytes > kSlabBytes)
    return make_status(MPI_ERR_INTERN, "IPC slab piece of %zu bytes (at most %zu)", bytes,
                       kSlabBytes);
  Slabs &s = slabs();
  std::lock_guard<std::mutex> lk(s.mu);
  Slabs::Slab &slab = s.current[std::make_pair(be, device)];
  if (!slab.base || slab.used + bytes > kSlabBytes) {
    void *p = nullptr;
    MPIX_TRY(be->alloc_device(device, kSlabBytes, &p));
    // Zero once: every word starts below every value its users count from.
    std::vector<unsigned char> zero(kSlabBytes, 0);
    MPIX_TRY(be->copy_sync(p, zero.data(), kSlabBytes));
    uint64_t base = 0, size = 0, id = 0;
    MPIX_TRY(be->ipc_range(p, &base, &size, &id));
    slab = Slabs::Slab{static_cast<char *>(p), id, 0};
  }
  out->words = reinterpret_cast<uint64_t *>(slab.base + slab.used);
  out->slab_base = reinterpret_cast<uint64_t>(slab.base);
  out->slab_id = slab.id;
  out->slab_bytes = kSlabBytes;
  slab.used += bytes;
  return {};
}

}  // namespace mpix
