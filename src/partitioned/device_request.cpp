#include "partitioned/device_request.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "gpu/backend.hpp"
#include "mpix/mpix_device.h"
#include "partitioned/prequest.hpp"

#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mpix {
namespace {

struct DeviceRequest {
  Backend *backend = nullptr;
  bool device_memory = false;  // descriptor in device memory (CUDA), else backend pinned
  void *mem = nullptr;         // the descriptor and its word table
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

#ifdef MPIX_HAVE_CUDA
// Copies @p n bytes to device memory and returns once they are there. A private non-blocking
// stream: cudaMemcpy on the legacy stream would wait behind user streams that may sit in a
// stream wait only the agent or a peer releases, and from pageable memory it may return
// before the DMA landed, so a kernel on another stream could read an older descriptor.
cudaError_t upload(void *dst, const void *src, std::size_t n) {
  cudaStream_t s = nullptr;
  cudaError_t rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (rc != cudaSuccess) return rc;
  rc = cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s);
  cudaError_t sync = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return rc != cudaSuccess ? rc : sync;
}
#endif

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
    return {};
  }
#endif
  return be->alloc_pinned(bytes, &dr->mem);
}

}  // namespace

Status device_request_create(const std::shared_ptr<PRequest> &r, MPIX_Prequest *out) {
  Backend *be = backend_for(*r);
  const std::shared_ptr<PWords> &w = r->words();
  const std::size_t n = w->part.size();
  static_assert(sizeof(mpix_prequest_s) % alignof(uint64_t *) == 0,
                "the word table follows the descriptor");
  std::vector<unsigned char> image(sizeof(mpix_prequest_s) + n * sizeof(uint64_t *));
  DeviceRequest dr;
  dr.words = w;
  // The table's address is only known once the descriptor is allocated.
  MPIX_TRY(allocate(be, image.size(), &dr));
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
#ifdef MPIX_HAVE_CUDA
  if (dr.device_memory) {
    cudaError_t rc = upload(dr.mem, image.data(), image.size());
    if (rc != cudaSuccess) {
      cudaFree(dr.mem);
      return make_status(MPI_ERR_OTHER, "writing a device request: %s", cudaGetErrorString(rc));
    }
  }
#endif
  if (!dr.device_memory) {
    std::memcpy(dr.mem, image.data(), image.size());
  } else {
    dr.host_copy.resize((image.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(dr.host_copy.data(), image.data(), image.size());
    auto *h = reinterpret_cast<mpix_prequest_s *>(dr.host_copy.data());
    h->words = reinterpret_cast<uint64_t *const *>(h + 1);
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
#ifdef MPIX_HAVE_CUDA
  if (dr.device_memory) {
    cudaFree(dr.mem);
    return {};
  }
#endif
  p->magic = 0;
  dr.backend->free_pinned(dr.mem);
  return {};
}

}  // namespace mpix
