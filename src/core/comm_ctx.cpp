#include "core/comm_ctx.hpp"

#include <atomic>
#include <mutex>
#include <new>

#include "base/internal_thread.hpp"
#include "base/log.hpp"

namespace mpix {
namespace comm_ctx_detail {
std::atomic<uint64_t> g_generation{1};
thread_local LastComm t_last MPIX_TLS_FAST;
}  // namespace comm_ctx_detail
namespace {

using comm_ctx_detail::g_generation;

// The attribute value is a heap-held shared_ptr, so duplicates share nothing but the stream.
using Holder = std::shared_ptr<CommCtx>;

int copy_fn_body(void *attr_in, void *attr_out, int *flag) {
  InternalScope internal;
  const Holder &old = *static_cast<Holder *>(attr_in);
  auto ctx = std::make_shared<CommCtx>();
  if (old->mux) {  // keeps the streams; pair communicators of its own (comm_ctx.hpp)
    auto mux = std::make_shared<Multiplex>();
    mux->local = old->mux->local;
    mux->counts = old->mux->counts;
    mux->width = old->mux->width;
    Status st = mux->dup_pairs_from(*old->mux);
    if (!st.is_ok()) {
      MPIX_LOG(error, "api", "duplicating a multiplex stream communicator: %s", st.what().c_str());
      *flag = 0;
      return st.code();
    }
    for (auto &s : mux->local)
      if (s) s->attached_comms.fetch_add(1);
    ctx->mux = std::move(mux);
    *static_cast<Holder **>(attr_out) = new Holder(std::move(ctx));
    *flag = 1;
    return MPI_SUCCESS;
  }
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
  ctx->count_for_plain_sync();
  *static_cast<Holder **>(attr_out) = new Holder(std::move(ctx));
  *flag = 1;
  return MPI_SUCCESS;
}

// Called by MPI (C): no exception may leave it; the context's destructor undoes the count.
int copy_fn(MPI_Comm, int, void *, void *attr_in, void *attr_out, int *flag) {
  try {
    return copy_fn_body(attr_in, attr_out, flag);
  } catch (const std::bad_alloc &) {
    *flag = 0;
    MPIX_LOG(error, "api", "duplicating a stream communicator: out of memory");
    return MPI_ERR_NO_MEM;
  } catch (...) {
    *flag = 0;
    MPIX_LOG(error, "api", "duplicating a stream communicator: internal error (exception)");
    return MPI_ERR_INTERN;
  }
}

int delete_fn(MPI_Comm, int, void *attr, void *) {
  auto *h = static_cast<Holder *>(attr);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  int64_t pending = (*h)->pending_ops.load();
  if (pending > 0) {
    MPIX_LOG(warn, "api",
             "MPI_Comm_free: %lld enqueued ops on this stream communicator have "
             "not completed; the communicator is not freed",
             static_cast<long long>(pending));
    return MPI_ERR_PENDING;
  }
  (*h)->detach_stream();
  delete h;
  return MPI_SUCCESS;
}

// Stream communicators whose stream syncs plain calls (Stream::syncs_plain_calls) alive: plain MPI
// calls look up nothing while 0.
std::atomic<int> g_sync_comms{0};

std::mutex g_kv_mu;
std::atomic<int> g_kv{MPI_KEYVAL_INVALID};

int keyval() {
  int kv = g_kv.load(std::memory_order_acquire);  // the enqueue path: no lock once made
  if (kv != MPI_KEYVAL_INVALID) return kv;
  std::lock_guard<std::mutex> lk(g_kv_mu);
  kv = g_kv.load();
  if (kv == MPI_KEYVAL_INVALID) {
    const int rc = MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, nullptr);
    if (rc != MPI_SUCCESS) {
      // Callers' MPI_Comm_get/set_attr then fail with MPI_ERR_KEYVAL, and say so.
      MPIX_LOG(error, "api", "MPI_Comm_create_keyval for stream communicators failed (%d)", rc);
      return MPI_KEYVAL_INVALID;
    }
    g_kv.store(kv, std::memory_order_release);
  }
  return kv;
}

}  // namespace

void comm_ctx_release_keyval() {
  std::lock_guard<std::mutex> lk(g_kv_mu);
  int kv = g_kv.exchange(MPI_KEYVAL_INVALID);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  // Communicators still carrying the attribute keep the key alive until they are freed.
  if (kv != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&kv);
}

Status Multiplex::dup_pairs_from(const Multiplex &from) {
  for (MPI_Comm c : from.pairs) {
    MPI_Comm d = MPI_COMM_NULL;
    const int rc = PMPI_Comm_dup(c, &d);
    if (rc != MPI_SUCCESS) {
      for (MPI_Comm &p : pairs) PMPI_Comm_free(&p);
      pairs.clear();
      return mpi_status(rc, "MPI_Comm_dup (pair communicator of a duplicate)", __FILE__, __LINE__);
    }
    pairs.push_back(d);
  }
  return {};
}

void Multiplex::free_pairs() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  for (MPI_Comm &c : pairs)
    if (c != MPI_COMM_NULL && !finalized) PMPI_Comm_free(&c);
  pairs.clear();
}

void CommCtx::detach_stream() {
  if (detached_.exchange(true)) return;
  if (stream) stream->attached_comms.fetch_sub(1);
  if (counted_sync_) g_sync_comms.fetch_sub(1, std::memory_order_relaxed);
  if (mux) {
    for (auto &s : mux->local)
      if (s) s->attached_comms.fetch_sub(1);
    mux->free_pairs();
  }
}

void CommCtx::count_for_plain_sync() {
  if (counted_sync_ || !stream || !stream->syncs_plain_calls()) return;
  counted_sync_ = true;
  g_sync_comms.fetch_add(1, std::memory_order_relaxed);
}

CommCtx::~CommCtx() { detach_stream(); }

Status comm_ctx_attach(MPI_Comm comm, std::shared_ptr<CommCtx> ctx) {
  ctx->count_for_plain_sync();
  auto *h = new Holder(std::move(ctx));
  int rc = MPI_Comm_set_attr(comm, keyval(), h);
  if (rc != MPI_SUCCESS) {
    delete h;
    return mpi_status(rc, "MPI_Comm_set_attr", __FILE__, __LINE__);
  }
  return {};
}

Status comm_ctx_drop(MPI_Comm comm) {
  void *v = nullptr;
  int flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_get_attr(comm, keyval(), &v, &flag));
  if (flag) MPIX_MPI_CHECK(MPI_Comm_delete_attr(comm, keyval()));
  return {};
}

Status comm_ctx_peek_ask(MPI_Comm comm, const std::shared_ptr<CommCtx> **out) {
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  void *v = nullptr;
  int flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_get_attr(comm, keyval(), &v, &flag));
  if (!flag) {
    *out = nullptr;
    return {};
  }
  auto *h = static_cast<Holder *>(v);
  *out = h;
  comm_ctx_detail::t_last = comm_ctx_detail::LastComm{comm, h, gen};
  return {};
}

Status comm_ctx_get(MPI_Comm comm, std::shared_ptr<CommCtx> *out) {
  const std::shared_ptr<CommCtx> *h = nullptr;
  MPIX_TRY(comm_ctx_peek(comm, &h));
  if (h) *out = *h;
  else out->reset();
  return {};
}

Status CommCtx::peer_count_ask(MPI_Comm comm, int *out) {
  int n = -1, inter = 0;
  MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
  if (inter) MPIX_MPI_CHECK(MPI_Comm_remote_size(comm, &n));
  else MPIX_MPI_CHECK(MPI_Comm_size(comm, &n));
  peers_.store(n, std::memory_order_relaxed);
  *out = n;
  return {};
}

std::shared_ptr<Stream> comm_ctx_sync_stream(MPI_Comm comm) {
  if (g_sync_comms.load(std::memory_order_relaxed) == 0 || comm == MPI_COMM_NULL) return {};
  const int kv = g_kv.load(std::memory_order_acquire);
  if (kv == MPI_KEYVAL_INVALID) return {};
  void *v = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(comm, kv, &v, &flag) != MPI_SUCCESS || !flag) return {};
  const Holder &h = *static_cast<Holder *>(v);
  if (!h->stream || !h->stream->syncs_plain_calls()) return {};
  return h->stream;
}

void comm_ctx_settle(MPI_Comm comm, std::chrono::milliseconds most) {
  const int kv = g_kv.load(std::memory_order_acquire);
  if (kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return;
  void *v = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(comm, kv, &v, &flag) != MPI_SUCCESS || !flag) return;
  const Holder &h = *static_cast<Holder *>(v);
  if (h->stream) h->stream->settle(most);
}

int64_t comm_ctx_pending(MPI_Comm comm) {
  const int kv = g_kv.load(std::memory_order_acquire);
  if (kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return 0;  // no stream comm made yet
  void *v = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(comm, kv, &v, &flag) != MPI_SUCCESS || !flag) return 0;
  return (*static_cast<Holder *>(v))->pending_ops.load();
}

}  // namespace mpix
