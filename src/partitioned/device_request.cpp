#include "partitioned/device_request.hpp"

#include <mutex>
#include <unordered_map>

#include "core/log.hpp"
#include "gpu/backend.hpp"
#include "mpix/mpix_device.h"
#include "partitioned/prequest.hpp"

namespace mpix {
namespace {

struct DeviceRequest {
  Backend *backend = nullptr;
  void *mem = nullptr;              // the descriptor and its word table
  std::shared_ptr<PWords> words;    // kept alive while a kernel may use them
};

struct Registry {
  std::mutex mu;
  std::unordered_map<const void *, DeviceRequest> live;
};

Registry &registry() {
  static auto *r = new Registry;
  return *r;
}

// The GPU backend of this process's device, with the signal pool mapped into the current
// device (opening a stream prepares a device; the null stream names the current one), or the
// host backend when no GPU backend runs here.
Backend *device_backend() {
  for (StreamKind k : {StreamKind::cuda, StreamKind::hip}) {
    Backend *be = nullptr;
    if (!backend_get(k, &be).is_ok()) continue;
    std::unique_ptr<ExecStream> probe;
    Status st = be->open_stream(nullptr, TriggerMode::memop, &probe);
    if (!st.is_ok()) {
      MPIX_LOG(warn, "api", "MPIX_Prequest_create: preparing the current %s device: %s",
               be->name(), st.what().c_str());
      continue;
    }
    return be;
  }
  Backend *host = nullptr;
  backend_get(StreamKind::host, &host);
  return host;
}

}  // namespace

Status device_request_create(const std::shared_ptr<PRequest> &r, MPIX_Prequest *out) {
  Backend *be = device_backend();
  const std::shared_ptr<PWords> &w = r->words();
  const std::size_t n = w->part.size();
  const std::size_t bytes = sizeof(mpix_prequest_s) + n * sizeof(uint64_t *);
  static_assert(sizeof(mpix_prequest_s) % alignof(uint64_t *) == 0,
                "the word table follows the descriptor");
  void *mem = nullptr;
  MPIX_TRY(be->alloc_pinned(bytes, &mem));
  auto *d = static_cast<mpix_prequest_s *>(mem);
  auto **table = reinterpret_cast<uint64_t **>(d + 1);
  for (std::size_t i = 0; i < n; ++i) table[i] = w->part[i].word;
  d->base = w->base;
  d->round = w->round.word;
  d->error = w->error.word;
  d->words = table;
  d->partitions = r->partitions();
  d->is_send = r->side() == PRequest::Side::send;
  d->magic = MPIX_PREQUEST_MAGIC;
  {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lk(reg.mu);
    reg.live[mem] = DeviceRequest{be, mem, w};
  }
  MPIX_LOG(debug, "api", "device request %p (%s memory) for %zu partitions", mem, be->name(), n);
  *out = d;
  return {};
}

Status device_request_free(MPIX_Prequest p) {
  DeviceRequest dr;
  {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lk(reg.mu);
    auto it = reg.live.find(p);
    if (it == reg.live.end())
      return make_status(MPI_ERR_ARG, "prequest %p is not a live device request (freed twice?)",
                         static_cast<void *>(p));
    dr = std::move(it->second);
    reg.live.erase(it);
  }
  p->magic = 0;
  dr.backend->free_pinned(dr.mem);
  return {};
}

}  // namespace mpix
