#include "partitioned/device_request.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "gpu/backend.hpp"
#include "mpix/mpix_device.h"
#include "partitioned/prequest.hpp"
#include "partitioned/round_mirror.hpp"

#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mpix {
namespace {

struct DeviceRequest {
  Backend *backend = nullptr;
  bool device_memory = false;  // descriptor in device memory (CUDA), else backend pinned
  int device = -1;             // where device_memory is
  uint64_t *dround = nullptr;  // in mem: the round's copy (PWords::mirrors), where device_memory
  void *mem = nullptr;         // the descriptor, its word table (and device copies)
  // Where mem is device memory: a host copy (own word table) for host threads, which use the
  // same handle through mpix_device.h's host build (MPIX_Prequest_host_view).
  std::vector<uint64_t> host_copy;
  std::shared_ptr<PWords> words;  // kept alive while a kernel may use them
};

struct Registry {
  std::mutex mu;
  std::unordered_map<const void *, DeviceRequest> live;
};

// Process-wide, not the Runtime's (core/runtime.hpp), and never destroyed: a device request is
// memory a kernel may still use after MPI_Finalize, and freeing it (MPIX_Prequest_free) or
// reading its host view needs no MPI, so a program may do either after MPI_Finalize.
Registry &registry() {
  static auto *r = new Registry;
  return *r;
}

// The GPU backend that runs here, or the host backend when none does. Opening a stream on the
// current device (the null stream names it) makes the backend map the signal pool into that
// device now, in case no stream of it was opened yet.
Backend *device_backend() {
  for (StreamKind k : {StreamKind::cuda, StreamKind::hip}) {
    Backend *be = nullptr;
    if (!backend_get(k, &be).is_ok()) continue;
    std::unique_ptr<ExecStream> probe;
    Status st = be->open_stream(nullptr, TriggerMode::memop, &probe);
    if (!st.is_ok())
      MPIX_LOG(info, "api",
               "MPIX_Prequest_create: preparing the current %s device through its "
               "null stream: %s (its signal memory is mapped once a stream of it is opened)",
               be->name(), st.what().c_str());
    return be;
  }
  Backend *host = nullptr;
  backend_get(StreamKind::host, &host);
  return host;
}

// The backend whose code will use @p r's descriptor. A request on a communicator of a host (or
// general) stream is driven by host functions on that stream, through mpix_device.h built for
// the host: its descriptor must be in host memory even where a GPU backend runs.
Backend *backend_for(const PRequest &r) {
  std::shared_ptr<CommCtx> ctx;
  if (comm_ctx_get(r.comm(), &ctx).is_ok() && ctx && ctx->stream &&
      (ctx->stream->kind() == StreamKind::host || ctx->stream->kind() == StreamKind::general)) {
    Backend *host = nullptr;
    backend_get(StreamKind::host, &host);
    return host;
  }
  return device_backend();
}

// Allocates the descriptor where the device reads it: device memory on CUDA (each device call
// then reads its constant fields from device memory, not across PCIe), else the backend's
// pinned host memory (plain host memory for the host backend).
Status allocate(Backend *be, std::size_t bytes, DeviceRequest *dr) {
  dr->backend = be;
#ifdef MPIX_HAVE_CUDA
  if (be->kind() == StreamKind::cuda) {
    void *d = nullptr;
    cudaError_t rc = cudaMalloc(&d, bytes);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      return make_status(MPI_ERR_NO_MEM,
                         "placing a %zu-byte device request in device memory: "
                         "%s",
                         bytes, cudaGetErrorString(rc));
    }
    dr->mem = d;
    dr->device_memory = true;
    cudaGetDevice(&dr->device);
    return {};
  }
#endif
  return be->alloc_pinned(bytes, &dr->mem);
}

#ifdef MPIX_HAVE_CUDA
// Whether @p buf is cudaMalloc memory of @p device.
bool on_device(const void *buf, int device) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice && a.device == device;
}

// Arrays of device marks, kept for the process's life and reused, never freed: freeing device
// memory waits for the whole device, and the last owner of a request's words may be the agent
// thread, dropping a freed request while a kernel spins on work only the agent can finish (a
// hang, seen on one H200). By (device, partitions).
struct MarkArrays {
  std::mutex mu;
  std::map<std::pair<int, std::size_t>, std::vector<void *>> spare;
};
MarkArrays &mark_arrays() {
  static auto *m = new MarkArrays;
  return *m;
}

// A send's device marks on the current device @p device (PRequest::share_device_marks).
Status alloc_marks(Backend *be, int device, const std::vector<uint64_t> &init, PWords *w) {
  const auto key = std::make_pair(device, init.size());
  void *d = nullptr;
  {
    MarkArrays &m = mark_arrays();
    std::lock_guard<std::mutex> lk(m.mu);
    std::vector<void *> &v = m.spare[key];
    if (!v.empty()) {
      d = v.back();
      v.pop_back();
    }
  }
  if (!d) {
    cudaError_t rc = cudaMalloc(&d, init.size() * sizeof(uint64_t));
    if (rc != cudaSuccess) {
      cudaGetLastError();
      return make_status(MPI_ERR_NO_MEM, "device marks of %zu partitions: %s", init.size(),
                         cudaGetErrorString(rc));
    }
  }
  // Back to the spares once the request and its device requests are gone (no kernel or stream
  // of theirs reads them then: the engine keeps a freed request until its stream finished).
  std::shared_ptr<void> mem(d, [key](void *p) {
    MarkArrays &m = mark_arrays();
    std::lock_guard<std::mutex> lk(m.mu);
    m.spare[key].push_back(p);
  });
  MPIX_TRY(device_write(be, device, d, init.data(), init.size() * sizeof(uint64_t)));
  w->dmarks = static_cast<uint64_t *>(d);
  w->dmarks_device = device;
  w->dmarks_backend = be;
  w->dmarks_memory = std::move(mem);
  return {};
}
#endif

void free_memory(const DeviceRequest &dr) {
#ifdef MPIX_HAVE_CUDA
  if (dr.device_memory) {
    cudaFree(dr.mem);
    return;
  }
#endif
  dr.backend->free_pinned(dr.mem);
}

}  // namespace

Status device_request_create(const std::shared_ptr<PRequest> &r, MPIX_Prequest *out) {
  Backend *be = backend_for(*r);
  const std::shared_ptr<PWords> &w = r->words();
  const std::size_t n = w->part.size();
  static_assert(sizeof(mpix_prequest_s) % alignof(uint64_t *) == 0,
                "the word table follows the descriptor");
  static_assert(sizeof(uint64_t *) == sizeof(uint64_t), "the device copies follow the table");
  // Descriptor (in device memory with the round's copy), word table; in device memory also one
  // word per partition.
  const std::size_t table_end = sizeof(mpix_prequest_s) + n * sizeof(uint64_t *);
  DeviceRequest dr;
  dr.words = w;
  // The table's address is only known once the descriptor is allocated.
  MPIX_TRY(allocate(be, table_end + n * sizeof(uint64_t), &dr));
  std::vector<unsigned char> image(dr.device_memory ? table_end + n * sizeof(uint64_t) : table_end);
  auto *d = reinterpret_cast<mpix_prequest_s *>(image.data());
  auto **table = reinterpret_cast<uint64_t **>(d + 1);
  for (std::size_t i = 0; i < n; ++i) table[i] = w->part[i].word;
  d->magic = MPIX_PREQUEST_MAGIC;
  d->base = w->base;
  d->round = w->round.word;
  d->error = w->error.word;
  d->words = reinterpret_cast<uint64_t *const *>(static_cast<mpix_prequest_s *>(dr.mem) + 1);
  d->partitions = r->partitions();
  d->is_send = r->side() == PRequest::Side::send;
  d->dround = d->dready = nullptr;
  d->darrived = nullptr;
  d->device_data = 0;
  d->reserved = 0;
  d->dround_copy = w->base;
  if (dr.device_memory) {
    d->darrived = r->link_arrived();  // device memory: read where the descriptor is
    // The partitions' last device marks: no mark yet (base).
    auto *copies = reinterpret_cast<uint64_t *>(image.data() + table_end);
    for (std::size_t i = 0; i < n; ++i) copies[i] = w->base;
    auto *dev_copies = reinterpret_cast<uint64_t *>(static_cast<char *>(dr.mem) + table_end);
    uint64_t *const dround = &static_cast<mpix_prequest_s *>(dr.mem)->dround_copy;
    d->dround = dround;
    if (d->is_send) {
      d->dready = dev_copies;
#ifdef MPIX_HAVE_CUDA
      // On the buffer's GPU: the request's shared marks, and the GPU-scope fence.
      uint64_t *marks = nullptr;
      const int device = dr.device;
      Status st = r->share_device_marks(
          on_device(r->buffer(), device),
          [&](const std::vector<uint64_t> &init, PWords *pw) {
            return alloc_marks(be, device, init, pw);
          },
          &marks);
      if (!st.is_ok()) {
        free_memory(dr);
        return st;
      }
      if (marks) {
        d->dready = marks;
        d->device_data = 1;
      }
#endif
    }
    dr.dround = dround;
    const RoundMirror mirror{dround, dr.device, be};
    Status st = r->attach_round_mirror(mirror, [&](uint64_t round_now) {
      d->dround_copy = round_now;
      return device_write(be, dr.device, dr.mem, image.data(), image.size());
    });
    if (!st.is_ok()) {
      free_memory(dr);
      return st;
    }
    dr.host_copy.resize((table_end + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(dr.host_copy.data(), image.data(), table_end);
    auto *h = reinterpret_cast<mpix_prequest_s *>(dr.host_copy.data());
    h->words = reinterpret_cast<uint64_t *const *>(h + 1);
    h->dround = h->dready = nullptr;  // host threads read the host words
    h->darrived = nullptr;  // (device_data stays: host marks are copied to the device marks)
  } else {
    std::memcpy(dr.mem, image.data(), image.size());
  }
  MPIX_LOG(debug, "api", "device request %p (%s, %s memory) for %zu partitions", dr.mem, be->name(),
           dr.device_memory ? "device" : "host", n);
  *out = static_cast<MPIX_Prequest>(dr.mem);
  Registry &reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  reg.live[dr.mem] = std::move(dr);
  return {};
}

MPIX_Prequest device_request_host_view(MPIX_Prequest p) {
  Registry &reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  auto it = reg.live.find(p);
  if (it == reg.live.end()) return nullptr;
  if (!it->second.device_memory) return p;
  return reinterpret_cast<MPIX_Prequest>(it->second.host_copy.data());
}

Status device_request_host_marked(MPIX_Prequest view, int low, int high, uint64_t mark) {
  std::shared_ptr<PWords> w;
  {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lk(reg.mu);
    // Host threads mark through a device request's host view rarely: a scan will do.
    for (auto &e : reg.live)
      if (e.second.device_memory && e.second.host_copy.data() == static_cast<const void *>(view))
        w = e.second.words;
  }
  if (!w || !w->dmarks)
    return make_status(MPI_ERR_ARG, "prequest %p is no host view of a request's device marks",
                       static_cast<void *>(view));
  if (low < 0 || low > high || high >= static_cast<int>(w->part.size()))
    return make_status(MPI_ERR_ARG, "partitions %d..%d are outside 0..%zu", low, high,
                       w->part.size() - 1);
  std::vector<int> parts;
  for (int p = low; p <= high; ++p) parts.push_back(p);
  return device_marks_store(*w, parts.data(), static_cast<int>(parts.size()), mark);
}

Status device_marks_for_stream(const std::shared_ptr<PRequest> &r) {
#ifdef MPIX_HAVE_CUDA
  // Only where a device request would make them: a CUDA backend (a host stream's is the host
  // one, which cannot write device memory).
  Backend *be = backend_for(*r);
  if (!be || be->kind() != StreamKind::cuda) return {};
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  if (!on_device(r->buffer(), current)) return {};  // host words, as without a device request
  uint64_t *marks = nullptr;
  return r->share_device_marks(
      true,
      [&](const std::vector<uint64_t> &init, PWords *pw) {
        return alloc_marks(be, current, init, pw);
      },
      &marks);
#else
  (void)r;
  return {};
#endif
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
  if (dr.device_memory) {
    std::lock_guard<std::mutex> lk(dr.words->mirror_mu);
    std::vector<RoundMirror> &m = dr.words->mirrors;
    for (auto i = m.begin(); i != m.end(); ++i)
      if (i->word == dr.dround) {
        m.erase(i);
        break;
      }
  } else {
    p->magic = 0;
  }
  free_memory(dr);
  return {};
}

}  // namespace mpix
