// C entry points: multiplex stream communicators and the point-to-point calls between their
// streams (MPICH 4.2's MPIX_Stream_comm_create_multiplex, MPIX_Stream_send / isend / recv /
// irecv). A message from stream index i of the sender to stream index j of the receiver goes
// over a private duplicate of the communicator made for the pair (i, j) (core/comm_ctx.hpp,
// Multiplex), so it matches only receives for that pair while the tag, MPI_ANY_TAG and
// MPI_ANY_SOURCE keep their meaning. The calls are host calls, as in MPICH: MPIX_Stream_send
// returns once the send buffer may be reused, MPIX_Stream_recv once the data has landed; the
// local stream is synchronised first where it syncs plain calls (GPU streams by default), as
// for plain MPI calls on a stream communicator.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>

#include "api/checks.hpp"
#include "api/errors.hpp"
#include "api/stream_handle.hpp"
#include "core/comm_ctx.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"

namespace mpix {
namespace {

void free_comms(std::vector<MPI_Comm> *comms) {
  for (MPI_Comm &c : *comms)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  comms->clear();
}

// This rank's streams, checked; MPI_ERR_ARG naming the bad argument.
Status local_streams(int count, MPIX_Stream streams[], Multiplex *mux) {
  if (count < 0) return make_status(MPI_ERR_ARG, "count %d is negative", count);
  if (count > 0 && !streams)
    return make_status(MPI_ERR_ARG, "array_of_streams is NULL with count %d", count);
  // No stream at all: one MPIX_STREAM_NULL entry (as MPICH does), so index 0 is valid.
  if (count == 0) mux->local.push_back(nullptr);
  for (int i = 0; i < count; ++i) {
    std::shared_ptr<Stream> s;
    if (streams[i] != MPIX_STREAM_NULL) {
      char what[48];
      std::snprintf(what, sizeof what, "array_of_streams[%d]", i);
      MPIX_TRY(find_stream(streams[i], &s, what));
    }
    mux->local.push_back(std::move(s));
  }
  return {};
}

Status comm_create_multiplex(MPI_Comm comm, int count, MPIX_Stream streams[], MPI_Comm *newcomm) {
  MPIX_TRY(check_comm(comm));
  int inter = 0;
  MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
  if (inter) return make_status(MPI_ERR_COMM, "comm is an intercommunicator");
  // As MPIX_Stream_comm_create: a rank with a bad argument or setting still joins the
  // agreement below, so that the others fail too instead of waiting for it.
  bool bad_setting = false;
  Status local = runtime_init(&bad_setting);
  if (!local.is_ok() && !bad_setting) return local;
  auto mux = std::make_shared<Multiplex>();
  if (local.is_ok() && !newcomm) local = make_status(MPI_ERR_ARG, "newcomm is NULL");
  if (local.is_ok()) local = local_streams(count, streams, mux.get());
  MPI_Comm dup = MPI_COMM_NULL;
  MPIX_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  // A multiplex communicator made from a stream communicator has only its own context.
  if (local.is_ok()) local = comm_ctx_drop(dup);
  int size = 0, rank = 0;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  // Every rank's stream count; -1 from a rank with a bad argument.
  int mine = local.is_ok() ? static_cast<int>(mux->local.size()) : -1;
  mux->counts.assign(static_cast<std::size_t>(size), 0);
  int rc = MPI_Allgather(&mine, 1, MPI_INT, mux->counts.data(), 1, MPI_INT, dup);
  Status st = local;
  if (st.is_ok() && rc != MPI_SUCCESS) st = mpi_status(rc, "MPI_Allgather", __FILE__, __LINE__);
  if (st.is_ok() && std::count(mux->counts.begin(), mux->counts.end(), -1) > 0)
    st = make_status(MPI_ERR_OTHER, "another rank passed a bad argument; no communicator made");
  if (st.is_ok()) {
    mux->width = *std::max_element(mux->counts.begin(), mux->counts.end());
    // width x width communicators, collective and in the same order on every rank.
    const std::size_t n = static_cast<std::size_t>(mux->width) * mux->width;
    for (std::size_t k = 0; k < n && st.is_ok(); ++k) {
      MPI_Comm c = MPI_COMM_NULL;
      // A split, not a duplicate: no attribute (stream context or the user's) is copied.
      rc = MPI_Comm_split(dup, 0, rank, &c);
      if (rc != MPI_SUCCESS) {
        st = mpi_status(rc, "MPI_Comm_split (pair communicator)", __FILE__, __LINE__);
        break;
      }
      // Failures come back to the MPIX_Stream_* call, which reports them on comm.
      MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
      mux->pairs.push_back(c);
    }
  }
  if (st.is_ok()) {
    auto ctx = std::make_shared<CommCtx>();
    for (auto &s : mux->local)
      if (s) s->attached_comms.fetch_add(1);
    ctx->mux = mux;
    st = comm_ctx_attach(dup, std::move(ctx));  // on failure the context undoes the counts
  }
  if (!st.is_ok()) {
    free_comms(&mux->pairs);
    MPI_Comm_free(&dup);
    return st;
  }
  *newcomm = dup;
  return {};
}

// The pair communicator of a point-to-point call on a multiplex communicator and the local
// stream it is ordered after. @p is_recv: the local index is @p dst_idx, else @p src_idx.
Status resolve(MPI_Comm comm, int peer, bool is_recv, int src_idx, int dst_idx, MPI_Comm *pair,
               std::shared_ptr<Stream> *local) {
  std::shared_ptr<CommCtx> ctx;
  MPIX_TRY(comm_ctx_get(comm, &ctx));
  if (!ctx || !ctx->mux)
    return make_status(MPI_ERR_COMM,
                       "comm is not a multiplex stream communicator (made by "
                       "MPIX_Stream_comm_create_multiplex)");
  const Multiplex &m = *ctx->mux;
  if (src_idx < 0) return make_status(MPI_ERR_ARG, "source_stream_index %d is negative", src_idx);
  if (dst_idx < 0) return make_status(MPI_ERR_ARG, "dest_stream_index %d is negative", dst_idx);
  const char *local_name = is_recv ? "dest_stream_index" : "source_stream_index";
  const char *remote_name = is_recv ? "source_stream_index" : "dest_stream_index";
  const int li = is_recv ? dst_idx : src_idx, ri = is_recv ? src_idx : dst_idx;
  const int nlocal = static_cast<int>(m.local.size());
  if (li >= nlocal)
    return make_status(MPI_ERR_ARG,
                       "%s %d is out of range: this rank has %d stream(s) on comm, indices 0..%d",
                       local_name, li, nlocal, nlocal - 1);
  if (ri >= m.width)
    return make_status(MPI_ERR_ARG,
                       "%s %d is out of range: no rank has more than %d stream(s) on comm",
                       remote_name, ri, m.width);
  if (peer >= 0 && peer < static_cast<int>(m.counts.size()) &&
      ri >= m.counts[static_cast<std::size_t>(peer)])
    return make_status(MPI_ERR_ARG, "%s %d is out of range: rank %d has %d stream(s) on comm",
                       remote_name, ri, peer, m.counts[static_cast<std::size_t>(peer)]);
  *pair = m.pair(src_idx, dst_idx);
  *local = m.local[static_cast<std::size_t>(li)];
  return {};
}

enum class Kind { send, isend, recv, irecv };

Status stream_p2p(Kind kind, void *buf, int count, MPI_Datatype dt, int peer, int tag,
                  MPI_Comm comm, int src_idx, int dst_idx, MPI_Request *request,
                  MPI_Status *status) {
  const bool is_recv = kind == Kind::recv || kind == Kind::irecv;
  const bool nonblocking = kind == Kind::isend || kind == Kind::irecv;
  if (nonblocking && !request) return make_status(MPI_ERR_ARG, "request is NULL");
  MPIX_TRY(runtime_init());
  MPIX_TRY(check_p2p(buf, count, dt, peer, tag, comm, is_recv));
  MPI_Comm pair = MPI_COMM_NULL;
  std::shared_ptr<Stream> local;
  MPIX_TRY(resolve(comm, peer, is_recv, src_idx, dst_idx, &pair, &local));
  if (local) MPIX_TRY(stream_drain_for_host_call(*local));
  int rc = MPI_SUCCESS;
  switch (kind) {
    case Kind::send:
      rc = PMPI_Send(buf, count, dt, peer, tag, pair);
      break;
    case Kind::isend:
      rc = PMPI_Isend(buf, count, dt, peer, tag, pair, request);
      break;
    case Kind::recv:
      rc = PMPI_Recv(buf, count, dt, peer, tag, pair, status);
      break;
    case Kind::irecv:
      rc = PMPI_Irecv(buf, count, dt, peer, tag, pair, request);
      break;
  }
  if (rc != MPI_SUCCESS)
    return mpi_status(rc, "the MPI call on the pair communicator", __FILE__, __LINE__);
  return {};
}

// The large-count (_c) variants: counts up to INT_MAX (MPI's int interface underneath).
Status count_fits(MPI_Count count) {
  if (count > static_cast<MPI_Count>(INT_MAX))
    return make_status(MPI_ERR_COUNT,
                       "count %lld exceeds INT_MAX (mpix calls the MPI library's int-count "
                       "interface)",
                       static_cast<long long>(count));
  return {};
}

Status stream_p2p_c(Kind kind, void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm, int src_idx, int dst_idx, MPI_Request *request,
                    MPI_Status *status) {
  MPIX_TRY(count_fits(count));
  return stream_p2p(kind, buf, static_cast<int>(count < 0 ? -1 : count), dt, peer, tag, comm,
                    src_idx, dst_idx, request, status);
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Stream_comm_create_multiplex(MPI_Comm comm, int count, MPIX_Stream array_of_streams[],
                                      MPI_Comm *newcomm) {
  return api_guard("MPIX_Stream_comm_create_multiplex", [&]() -> int {
    return finish(comm, "MPIX_Stream_comm_create_multiplex",
                  comm_create_multiplex(comm, count, array_of_streams, newcomm));
  });
}

int MPIX_Stream_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, int source_stream_index, int dest_stream_index) {
  return api_guard("MPIX_Stream_send", [&]() -> int {
    return finish(comm, "MPIX_Stream_send",
                  stream_p2p(Kind::send, const_cast<void *>(buf), count, datatype, dest, tag, comm,
                             source_stream_index, dest_stream_index, nullptr, nullptr));
  });
}

int MPIX_Stream_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, int source_stream_index, int dest_stream_index,
                      MPI_Request *request) {
  return api_guard("MPIX_Stream_isend", [&]() -> int {
    return finish(comm, "MPIX_Stream_isend",
                  stream_p2p(Kind::isend, const_cast<void *>(buf), count, datatype, dest, tag, comm,
                             source_stream_index, dest_stream_index, request, nullptr));
  });
}

int MPIX_Stream_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, int source_stream_index, int dest_stream_index,
                     MPI_Status *status) {
  return api_guard("MPIX_Stream_recv", [&]() -> int {
    return finish(comm, "MPIX_Stream_recv",
                  stream_p2p(Kind::recv, buf, count, datatype, source, tag, comm,
                             source_stream_index, dest_stream_index, nullptr, status));
  });
}

int MPIX_Stream_irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, int source_stream_index, int dest_stream_index,
                      MPI_Request *request) {
  return api_guard("MPIX_Stream_irecv", [&]() -> int {
    return finish(comm, "MPIX_Stream_irecv",
                  stream_p2p(Kind::irecv, buf, count, datatype, source, tag, comm,
                             source_stream_index, dest_stream_index, request, nullptr));
  });
}

int MPIX_Stream_send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, int source_stream_index, int dest_stream_index) {
  return api_guard("MPIX_Stream_send_c", [&]() -> int {
    return finish(comm, "MPIX_Stream_send_c",
                  stream_p2p_c(Kind::send, const_cast<void *>(buf), count, datatype, dest, tag,
                               comm, source_stream_index, dest_stream_index, nullptr, nullptr));
  });
}

int MPIX_Stream_isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, int source_stream_index, int dest_stream_index,
                        MPI_Request *request) {
  return api_guard("MPIX_Stream_isend_c", [&]() -> int {
    return finish(comm, "MPIX_Stream_isend_c",
                  stream_p2p_c(Kind::isend, const_cast<void *>(buf), count, datatype, dest, tag,
                               comm, source_stream_index, dest_stream_index, request, nullptr));
  });
}

int MPIX_Stream_recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, int source_stream_index, int dest_stream_index,
                       MPI_Status *status) {
  return api_guard("MPIX_Stream_recv_c", [&]() -> int {
    return finish(comm, "MPIX_Stream_recv_c",
                  stream_p2p_c(Kind::recv, buf, count, datatype, source, tag, comm,
                               source_stream_index, dest_stream_index, nullptr, status));
  });
}

int MPIX_Stream_irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, int source_stream_index, int dest_stream_index,
                        MPI_Request *request) {
  return api_guard("MPIX_Stream_irecv_c", [&]() -> int {
    return finish(comm, "MPIX_Stream_irecv_c",
                  stream_p2p_c(Kind::irecv, buf, count, datatype, source, tag, comm,
                               source_stream_index, dest_stream_index, request, nullptr));
  });
}

}  // extern "C"
