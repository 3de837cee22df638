// What mpix attaches to a stream communicator (an MPI attribute): its stream and the provider's
// per-communicator state. MPI_Comm_dup / idup copy it; MPI_Comm_free deletes it (and fails with
// MPI_ERR_PENDING while ops on the communicator are pending).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "base/tls_fast.hpp"
#include "core/op.hpp"
#include "core/provider.hpp"
#include "core/stream.hpp"

namespace mpix {

// A multiplex stream communicator (MPIX_Stream_comm_create_multiplex): each rank's own array of
// streams, every rank's stream count, and one private duplicate of the communicator per
// (source index, destination index) pair, so that MPIX_Stream_send from stream i to stream j
// matches only MPIX_Stream_recv for that pair, whatever the tag (MPI_ANY_TAG included) or
// source (MPI_ANY_SOURCE included).
//
// MPI_Comm_dup / MPI_Comm_idup of a multiplex communicator keep its streams, as in MPICH: the
// duplicate gets pair communicators of its own, duplicated from the original's inside the
// attribute copy, which every rank runs inside its dup call, in the same order. They are made
// with blocking MPI_Comm_dup: MPI_Comm_idup of a multiplex communicator therefore returns only
// once every rank has called it (nonblocking communicator creation started inside the copy
// callback hung or crashed Open MPI 4.1 in about one run in ten).
struct Multiplex {
  std::vector<std::shared_ptr<Stream>> local;  // entries may be null (MPIX_STREAM_NULL)
  std::vector<int> counts;                     // streams of each rank of the communicator
  int width = 0;                               // the largest count: pairs are width x width
  std::vector<MPI_Comm> pairs;                 // pairs[src_index * width + dst_index]
  MPI_Comm pair(int src_index, int dst_index) const {
    return pairs[static_cast<std::size_t>(src_index) * static_cast<std::size_t>(width) +
                 static_cast<std::size_t>(dst_index)];
  }
  // A duplicate: MPI_Comm_dup of each of @p from's pair communicators (collective: call on every
  // rank in the same order). On failure nothing is left behind.
  Status dup_pairs_from(const Multiplex &from);
  // Frees the pair communicators (at MPI_Comm_free of the multiplex communicator).
  void free_pairs();
};

struct CommCtx {
  std::shared_ptr<Stream> stream;  // null for a plain duplicate (MPIX_STREAM_NULL)
  std::shared_ptr<Multiplex> mux;  // set for a multiplex communicator (stream is then null)
  // The p2p provider's state (provider.hpp). The collective slot's provider keeps none: it
  // posts collectives on the communicator itself.
  std::unique_ptr<ProviderComm> prov;
  std::atomic<int64_t> pending_ops{0};
  // Ranks a peer may name on @p comm (this context's communicator): its size, or its remote
  // size for an intercommunicator. Asked of MPI once, then kept (a communicator's size never
  // changes), so that the enqueue path's rank check calls no MPI.
  // Inline once known: one load.
  Status peer_count(MPI_Comm comm, int *out) {
    *out = peers_.load(std::memory_order_relaxed);
    return *out >= 0 ? Status{} : peer_count_ask(comm, out);
  }
  // Stops counting this communicator in stream->attached_comms (once). Called at MPI_Comm_free:
  // ops that just completed may keep the context alive a moment longer, and MPIX_Stream_free
  // right after MPI_Comm_free must still succeed.
  // Frees a multiplex communicator's pair communicators too.
  void detach_stream();
  // Counts this communicator among those whose plain MPI calls synchronise the stream first
  // (Stream::syncs_plain_calls); detach_stream undoes it. Once.
  void count_for_plain_sync();
  ~CommCtx();

 private:
  std::atomic<bool> detached_{false};
  bool counted_sync_ = false;
  std::atomic<int> peers_{-1};  // peer_count once asked (-1: not yet)
  Status peer_count_ask(MPI_Comm comm, int *out);
};

// The per-communicator state of the provider that carries @p op (provider_for): the p2p
// provider's for sends and receives, none for collectives. That provider made it, so it is of
// the provider's own type @p T; null where the provider keeps none for the communicator.
template <class T>
T *provider_comm(const Op &op) {
  if (!op.ctx || op.kind == OpKind::allreduce) return nullptr;
  return static_cast<T *>(op.ctx->prov.get());
}

// Attaches a new context to @p comm.
Status comm_ctx_attach(MPI_Comm comm, std::shared_ptr<CommCtx> ctx);
// Removes the context MPI_Comm_dup copied onto @p comm (a duplicate of a stream communicator
// that is to get a context of its own); nothing if it has none.
Status comm_ctx_drop(MPI_Comm comm);
// The context of @p comm, or null if it is not a stream communicator.
Status comm_ctx_get(MPI_Comm comm, std::shared_ptr<CommCtx> *out);
namespace comm_ctx_detail {
// Bumped whenever an attribute value may go away, so that every thread's cached lookup
// (t_last) is dropped before the shared_ptr it points to is deleted or its communicator handle
// is reused by a new communicator.
extern std::atomic<uint64_t> g_generation;
// The last stream communicator this thread enqueued on, and the attribute value MPI gave for
// it: the next enqueue on it skips MPI_Comm_get_attr (a hash lookup under Open MPI's attribute
// lock). Valid while `generation` is current: using a communicator concurrently with freeing it
// is erroneous, so a free (which bumps the generation) happens before any later use that could
// see a reused handle.
// All zero to begin with (a constant, so no TLS init call on access): generation 0 is never
// current.
struct LastComm {
  MPI_Comm comm{};
  const std::shared_ptr<CommCtx> *holder{};
  uint64_t generation{};
};
extern thread_local LastComm t_last MPIX_TLS_FAST;
}  // namespace comm_ctx_detail
// comm_ctx_peek's lookup through MPI (and the cache's refill).
Status comm_ctx_peek_ask(MPI_Comm comm, const std::shared_ptr<CommCtx> **out);
// The same, borrowed (no reference taken): *@p out points at the attribute's own shared_ptr,
// valid while @p comm is (using a communicator while another thread frees it is erroneous), so
// for the length of one call on @p comm; null if it is not a stream communicator. Inline for
// the communicator the thread used last.
inline Status comm_ctx_peek(MPI_Comm comm, const std::shared_ptr<CommCtx> **out) {
  const uint64_t gen = comm_ctx_detail::g_generation.load(std::memory_order_acquire);
  const comm_ctx_detail::LastComm &last = comm_ctx_detail::t_last;
  if (last.generation == gen && last.comm == comm && comm != MPI_COMM_NULL) {
    *out = last.holder;
    return {};
  }
  return comm_ctx_peek_ask(comm, out);
}
// Ops enqueued on @p comm and not completed (0 if it is not a stream communicator). Makes no
// attribute key (MPI_Comm_free of any communicator asks).
int64_t comm_ctx_pending(MPI_Comm comm);
// Waits, at most @p most, for the ops of @p comm's stream that the stream may have passed
// before they completed (Stream::settle).
void comm_ctx_settle(MPI_Comm comm, std::chrono::milliseconds most);
// For libmpix's plain MPI calls (api/plain_mpi_api.cpp): the stream to synchronise before a
// call on @p comm (a stream communicator whose stream syncs plain calls), or null. A single relaxed
// load when no such communicator exists; otherwise one attribute lookup.
std::shared_ptr<Stream> comm_ctx_sync_stream(MPI_Comm comm);
// At MPI_Finalize: frees the attribute key (MPI keeps it while communicators still use it).
void comm_ctx_release_keyval();

}  // namespace mpix
