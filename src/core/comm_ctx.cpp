#include "core/comm_ctx.hpp"

#include <atomic>
#include <mutex>

#include "core/log.hpp"

namespace mpix {
namespace {

// The attribute value is a heap-held shared_ptr, so duplicates share nothing but the stream.
using Holder = std::shared_ptr<CommCtx>;

int copy_fn(MPI_Comm, int, void *, void *attr_in, void *attr_out, int *flag) {
  const Holder &old = *static_cast<Holder *>(attr_in);
  auto ctx = std::make_shared<CommCtx>();
  ctx->stream = old->stream;
  if (ctx->stream) ctx->stream->attached_comms.fetch_add(1);
  Provider *prov = nullptr;
  if (ctx->stream && old->prov) {
    Status st = provider_get(&prov);
    if (st.is_ok()) st = prov->comm_dup(old->prov.get(), &ctx->prov);
    if (!st.is_ok()) {
      MPIX_LOG(error, "api", "duplicating a stream communicator: %s", st.what().c_str());
      *flag = 0;
      return st.code();
    }
  }
  *static_cast<Holder **>(attr_out) = new Holder(std::move(ctx));
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_fn(MPI_Comm, int, void *attr, void *) {
  auto *h = static_cast<Holder *>(attr);
  int64_t pending = (*h)->pending_ops.load();
  if (pending > 0) {
    MPIX_LOG(warn, "api", "MPI_Comm_free: %lld enqueued ops on this stream communicator have "
             "not completed; the communicator is not freed", static_cast<long long>(pending));
    return MPI_ERR_PENDING;
  }
  (*h)->detach_stream();
  delete h;
  return MPI_SUCCESS;
}

std::mutex g_kv_mu;
std::atomic<int> g_kv{MPI_KEYVAL_INVALID};

int keyval() {
  int kv = g_kv.load(std::memory_order_acquire);  // the enqueue path: no lock once made
  if (kv != MPI_KEYVAL_INVALID) return kv;
  std::lock_guard<std::mutex> lk(g_kv_mu);
  kv = g_kv.load();
  if (kv == MPI_KEYVAL_INVALID) {
    MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, nullptr);
    g_kv.store(kv, std::memory_order_release);
  }
  return kv;
}

}  // namespace

void comm_ctx_release_keyval() {
  std::lock_guard<std::mutex> lk(g_kv_mu);
  int kv = g_kv.exchange(MPI_KEYVAL_INVALID);
  // Communicators still carrying the attribute keep the key alive until they are freed.
  if (kv != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&kv);
}

void CommCtx::detach_stream() {
  if (stream && !detached_.exchange(true)) stream->attached_comms.fetch_sub(1);
}

CommCtx::~CommCtx() { detach_stream(); }

Status comm_ctx_attach(MPI_Comm comm, std::shared_ptr<CommCtx> ctx) {
  auto *h = new Holder(std::move(ctx));
  int rc = MPI_Comm_set_attr(comm, keyval(), h);
  if (rc != MPI_SUCCESS) {
    delete h;
    return mpi_status(rc, "MPI_Comm_set_attr", __FILE__, __LINE__);
  }
  return {};
}

Status comm_ctx_get(MPI_Comm comm, std::shared_ptr<CommCtx> *out) {
  void *v = nullptr;
  int flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_get_attr(comm, keyval(), &v, &flag));
  if (flag) *out = *static_cast<Holder *>(v);
  else out->reset();
  return {};
}

}  // namespace mpix
