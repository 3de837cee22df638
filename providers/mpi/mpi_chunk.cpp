#include "providers/mpi/mpi_chunk.hpp"

#include <climits>
#include <cstring>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/op.hpp"
#include "core/stream.hpp"
#include "providers/mpi/mpi_settings.hpp"

namespace mpix {

namespace {

constexpr uint64_t kHeader = sizeof(ChunkHeader);

// Null when neither chunking nor GPU-direct is on, and for collectives.
MpiComm *chunk_comm(const Op &op) { return provider_comm<MpiComm>(op); }

uint64_t bytes_of(const MPI_Status &st) {
  MPI_Status s = st;
  MPI_Count n = 0;
  if (MPI_Get_elements_x(&s, MPI_BYTE, &n) != MPI_SUCCESS || n < 0) return 0;
  return static_cast<uint64_t>(n);
}

// Posts @p n bytes at @p a followed by @p hn bytes at @p b as one message (a derived datatype of
// absolute addresses), so that a first piece needs no copy to put the header behind the data.
Status two_block_type(const void *a, int n, const void *b, int hn, MPI_Datatype *out) {
  MPI_Aint disp[2];
  MPIX_MPI_CHECK(MPI_Get_address(a, &disp[0]));
  MPIX_MPI_CHECK(MPI_Get_address(b, &disp[1]));
  int lens[2] = {n, hn};
  MPI_Datatype types[2] = {MPI_BYTE, MPI_BYTE};
  MPIX_MPI_CHECK(MPI_Type_create_struct(2, lens, disp, types, out));
  MPIX_MPI_CHECK(MPI_Type_commit(out));
  return {};
}

// Completes what has completed of @p reqs; true once all have.
Status test_all(std::vector<MPI_Request> &reqs, bool *all) {
  int flag = 0;
  *all = false;
  if (reqs.empty()) {
    *all = true;
    return {};
  }
  MPIX_MPI_CHECK(
      MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &flag, MPI_STATUSES_IGNORE));
  *all = flag != 0;
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Communicators.

ChunkShared::~ChunkShared() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && priv != MPI_COMM_NULL) MPI_Comm_free(&priv);
}

Matcher::~Matcher() {
  if (!held.empty())
    MPIX_LOG(warn, "mpi",
             "a chunk-enabled communicator went away with %zu message(s) that no "
             "mpix receive took",
             held.size());
}

bool MpiComm::gpu_direct_peer(int rank) const {
  return ipc && rank >= 0 && static_cast<std::size_t>(rank) < ipc->direct.size() &&
         ipc->direct[static_cast<std::size_t>(rank)];
}

Status chunk_comm_open(MPI_Comm comm, const CommStreamInfo &si,
                       std::unique_ptr<ProviderComm> *out) {
  out->reset();
  const long c = setting_long(MpiSetting::staging_chunk);
  long mine[2] = {c, -c}, agg[2] = {0, 0};
  MPIX_MPI_CHECK(MPI_Allreduce(mine, agg, 2, MPI_LONG, MPI_MAX, comm));
  if (agg[0] != -agg[1])
    return make_status(MPI_ERR_ARG,
                       "MPIX_STAGING_CHUNK differs across the ranks of the "
                       "communicator (%ld here; between %ld and %ld): every rank must use the "
                       "same value",
                       c, -agg[1], agg[0]);
  if (c < 0 || c > INT_MAX - static_cast<long>(kHeader))
    return make_status(MPI_ERR_ARG, "MPIX_STAGING_CHUNK=%ld is out of range (0 .. %ld bytes)", c,
                       static_cast<long>(INT_MAX - kHeader));
  std::shared_ptr<IpcShared> ipc;
  MPIX_TRY(ipc_comm_open(comm, si.backend, si.device, si.host_functions, c != 0, &ipc));
  if (c == 0) {
    if (!ipc) return {};
    // GPU-direct peers, no chunks: mpix matches the receives, to find the peers' headers.
    auto mc = std::make_unique<MpiComm>();
    mc->shared = std::make_shared<ChunkShared>();
    mc->matcher->shared = mc->shared;
    mc->matcher->ipc = ipc;
    mc->ipc = std::move(ipc);
    *out = std::move(mc);
    return {};
  }
  auto sh = std::make_shared<ChunkShared>();
  sh->chunk = static_cast<std::size_t>(c);
  int rank = 0, *ub = nullptr, flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // A split, not a dup: a dup would copy the stream communicator's attributes (its stream).
  MPIX_MPI_CHECK(MPI_Comm_split(comm, 0, rank, &sh->priv));
  MPIX_MPI_CHECK(MPI_Comm_set_errhandler(sh->priv, MPI_ERRORS_RETURN));
  MPIX_MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  if (flag && ub) sh->tag_ub = *ub;
  auto mc = std::make_unique<MpiComm>();
  mc->matcher->shared = sh;
  mc->shared = std::move(sh);
  MPIX_LOG(debug, "mpi", "stream communicator with %ld-byte staging chunks", c);
  *out = std::move(mc);
  return {};
}

Status chunk_comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out) {
  out->reset();
  if (!old) return {};
  auto mc = std::make_unique<MpiComm>();
  mc->shared = static_cast<const MpiComm *>(old)->shared;
  mc->matcher->shared = mc->shared;
  mc->ipc = static_cast<const MpiComm *>(old)->ipc;
  mc->matcher->ipc = mc->ipc;
  *out = std::move(mc);
  return {};
}

// ---------------------------------------------------------------------------------------------
// Sends.

struct ChunkSend {
  Op *op = nullptr;
  std::shared_ptr<ChunkShared> shared;
  ChunkHeader hdr{};
  const char *base = nullptr;
  uint64_t pieces = 0, posted = 0;
  int tag = 0;
  std::vector<MPI_Request> reqs;

  Status post_piece(uint64_t i) {
    const uint64_t at = i * hdr.chunk;
    const uint64_t n = hdr.total - at < hdr.chunk ? hdr.total - at : hdr.chunk;
    MPI_Request r = MPI_REQUEST_NULL;
    MPIX_MPI_CHECK(
        MPI_Isend(base + at, static_cast<int>(n), MPI_BYTE, op->peer, tag, shared->priv, &r));
    reqs.push_back(r);
    ++posted;
    return {};
  }
};

// ---------------------------------------------------------------------------------------------
// Receives.

struct ChunkRecv {
  Op *op = nullptr;
  std::shared_ptr<ChunkShared> shared;
  MPI_Status probe{};
  // first: a possible first piece is arriving; rest: the other pieces; plain: one message;
  // rts: a possible GPU-direct header is arriving; copy: its message is being copied in.
  // ready: an announced send's READY is awaited before the agent copies it; undecided: so is
  // it, but the stream copies instead if the receive's wait comes first (stream_copy).
  enum class Phase { first, rest, plain, rts, undecided, ready, copy } phase = Phase::plain;
  bool contiguous = false;  // the receive is cap bytes at op->rbuf, in order
  uint64_t cap = 0;         // bytes the receive can hold
  uint64_t elem = 1;        // bytes per element of its datatype
  uint64_t msg = 0;         // bytes of the message
  uint64_t written = 0;     // bytes that reached the receive buffer
  int err = MPI_SUCCESS;
  ChunkHeader hdr{};
  std::vector<char> temp;   // a first piece or a whole message that cannot go in place
  bool unpack = false;      // temp holds the message; unpack it into the receive at the end
  bool in_place = false;    // the pieces land in the receive buffer (a bounce buffer, if staged)
  std::size_t arrived = 0;  // pieces 1.. received, in order
  std::vector<MPI_Request> reqs;
  IpcRts rts{};                     // a GPU-direct header (Phase::rts / ready / copy)
  const char *src_ = nullptr;       // the message, mapped here
  const uint64_t *gate_ = nullptr;  // an announced send's ready word, mapped here
  const uint64_t *done_ = nullptr;  // the sender's done word (IpcRts::done), mapped here
  std::unique_ptr<IpcAsk> ask;      // Phase::undecided / ready: WANT and READY
  Backend *be = nullptr;            // where its copy runs
  int device = -1;
  uint64_t ticket = 0;
  // A GPU-direct header was matched and its sender not answered yet: the sender's send
  // completes only on an answer, so a receive that fails from here on still sends one.
  bool owes_answer = false;

  // Pieces complete in order as a rule; counts those done from the first, and tells a staged
  // receive's stream (which copies piece i in once it is there) how far it may go.
  Status test_pieces(bool *all) {
    const std::size_t before = arrived;
    while (arrived < reqs.size()) {
      int flag = 0;
      MPIX_MPI_CHECK(MPI_Test(&reqs[arrived], &flag, MPI_STATUS_IGNORE));
      if (!flag) break;
      ++arrived;
    }
    if (arrived != before && in_place) {
      MPIX_LOG(trace, "mpi", "chunked receive from %d: %zu of %zu pieces in place",
               probe.MPI_SOURCE, arrived + 1, reqs.size() + 1);
      op_pieces_arrived(*op, msg, arrived + 1);
    }
    *all = arrived == reqs.size();
    return {};
  }

  Status unpack_temp(uint64_t n) {
    int pos = 0;
    const MPI_Count elems = static_cast<MPI_Count>(n / elem);
    if (elems > 0)
      MPIX_MPI_CHECK(MPI_Unpack(temp.data(), static_cast<int>(n), &pos, op->rbuf,
                                static_cast<int>(elems), op->dt, MPI_COMM_SELF));
    written = n;
    return {};
  }

  // The first piece arrived: a chunked message, or a plain one of exactly C + 32 bytes.
  Status first_done() {
    const std::size_t c = shared->chunk;
    const char *h = contiguous ? reinterpret_cast<const char *>(&hdr) : temp.data() + c;
    ChunkHeader got;
    std::memcpy(&got, h, sizeof got);
    const bool chunked = got.magic == kChunkMagic && got.chunk == c && got.total > c;
    if (!chunked) {
      msg = c + kHeader;
      if (msg > cap) {
        err = MPI_ERR_TRUNCATE;
        written = contiguous ? c : 0;
      } else if (contiguous) {
        std::memcpy(static_cast<char *>(op->rbuf) + c, &hdr, kHeader);
        written = msg;
      } else {
        MPIX_TRY(unpack_temp(msg));
      }
      phase = Phase::plain;
      return {};
    }
    msg = got.total;
    const uint64_t pieces = (got.total + c - 1) / c;
    const int tag = static_cast<int>(got.seq % (static_cast<uint64_t>(shared->tag_ub) + 1));
    char *dst = nullptr;
    if (msg > cap) {
      // Too long: take the pieces off the private communicator all the same, and drop them.
      err = MPI_ERR_TRUNCATE;
      written = contiguous ? c : 0;
      temp.resize(msg);
      dst = temp.data();
    } else if (contiguous) {
      dst = static_cast<char *>(op->rbuf);
      in_place = true;
      // Piece 0 is in place: a pipelined copy in may take it while the rest arrive.
      op_pieces_arrived(*op, msg, 1);
    } else {
      temp.resize(msg);  // the first piece's data stays where it is, at the start
      dst = temp.data();
      unpack = true;
    }
    phase = Phase::rest;
    reqs.clear();
    for (uint64_t i = 1; i < pieces; ++i) {
      const uint64_t at = i * c, n = msg - at < c ? msg - at : c;
      MPI_Request r = MPI_REQUEST_NULL;
      // Pieces with one tag from one sender arrive in the order they were sent: the i-th
      // receive posted gets piece i.
      MPIX_MPI_CHECK(MPI_Irecv(dst + at, static_cast<int>(n), MPI_BYTE, probe.MPI_SOURCE, tag,
                               shared->priv, &r));
      reqs.push_back(r);
    }
    return {};
  }

  // A header-sized message arrived: a GPU-direct header, or a plain message of that size.
  Status rts_done(IpcPath &path) {
    std::memcpy(&rts, temp.data(), sizeof rts);
    if (rts.magic != kIpcRtsMagic) {
      msg = sizeof rts;
      phase = Phase::plain;
      if (msg > cap) {
        err = MPI_ERR_TRUNCATE;
        written = 0;
      } else if (contiguous) {
        std::memcpy(op->rbuf, temp.data(), sizeof rts);
        written = msg;
      } else {
        MPIX_TRY(unpack_temp(msg));
      }
      return {};
    }
    msg = rts.bytes;
    owes_answer = true;
    if (msg > cap) {
      // MPI_ERR_TRUNCATE, nothing copied; the sender hears the error and completes.
      err = MPI_ERR_TRUNCATE;
      written = 0;
      phase = Phase::plain;
      return answer(path);
    }
    if (op->stream) {
      ExecStream *ex = nullptr;
      MPIX_TRY(op->stream->exec(&ex));
      be = op->stream->backend();
      device = ex->device();
    } else {
      // A partition's receive (a gated op, src/partitioned): no stream; its buffer is on the
      // device of its communicator's stream.
      be = ipc->backend;
      device = ipc->device;
    }
    // With MPIX_GPU_DIRECT_COPY=stream, the receiving stream's copy in takes the message from
    // the sender's memory: the receive completes now, and the sender hears once the stream has
    // copied. Only where the stream's wait on the receive is queued already and is the next
    // wait of that stream to be released (Stream::wait_order): the stream then reaches the copy
    // whatever other ranks do. A receive that a host MPI_Wait / MPI_Waitall may complete would
    // copy only when that call returns (an MPI_Waitall that also waits on a send to the same
    // peer would never return: each side's send waits for the other's copy), and one whose
    // stream first waits on a send (MPIX_Wait_enqueue on an Isend before the one on an Irecv,
    // on both ranks) would wait for the peer's stream, which waits for this one. Those are
    // copied by the agent.
    // An announced send's data is in place once its ready word says so: the stream's copy
    // waits for the word on the GPU; the agent's, for the sender's READY (asked for by WANT).
    const char *src = nullptr;
    const uint64_t *gate = nullptr;
    Status mapped = path.map_source(rts, be, device, &src);
    if (mapped.is_ok() && rts.early) mapped = path.map_ready(rts, be, device, &gate);
    if (!mapped.is_ok()) {
      // The receive fails with the reason; the sender hears it and completes.
      err = mapped.code();
      written = 0;
      phase = Phase::plain;
      MPIX_TRY(answer(path));
      return mapped;
    }
    src_ = src;
    gate_ = gate;
    // A send completed on the GPU: its ready word, mapped (already, where it is announced). A
    // word that cannot be mapped is not written: the sender's stream goes on at the answer.
    done_ = nullptr;
    if (rts.done) {
      const uint64_t *w = gate;
      Status st = w ? Status{} : path.map_ready(rts, be, device, &w);
      if (st.is_ok()) done_ = w;
      else
        MPIX_LOG(debug, "mpi", "GPU-direct receive from %d: the sender's done word not mapped (%s)",
                 probe.MPI_SOURCE, st.what().c_str());
    }
    if (stream_copy(path)) return {};
    if (rts.early) {
      // The agent copies once the sender says its data is in place (READY). A receive whose
      // stream wait is not queued yet may still be copied by its stream, if that wait comes
      // first and is the stream's next (Phase::undecided, ChunkEngine::progress).
      const bool later = op->stream && !op_stream_waits(*op) && ipc_stream_copies();
      phase = later ? Phase::undecided : Phase::ready;
      MPIX_LOG(trace, "mpi", "GPU-direct receive from %d: announced send, asking for READY%s",
               probe.MPI_SOURCE, later ? " (the stream may yet copy it)" : "");
      return path.ask_ready(*ipc, probe.MPI_SOURCE, rts, &ask);
    }
    return agent_copy(path);
  }

  // The receiving stream copies the message where it can (see rts_done); true if it does: the
  // receive is then complete, and the sender hears once the stream has copied.
  bool stream_copy(IpcPath &path) {
    const uint64_t *copied = nullptr;
    std::shared_ptr<const void> keep;
    if (!ipc_stream_copies() || !op->stream || !op_stream_waits(*op) ||
        !op->stream->wait_order().is_next(op->done.word, op->done_value) ||
        !op_deliver_from(*op, src_, msg, &copied, &keep, gate_, rts.ready_value, done_,
                         rts.ready_value + 1))
      return false;
    MPIX_LOG(trace, "mpi",
             "GPU-direct receive from %d, tag %d: %llu bytes (token %llu), copied by the stream",
             probe.MPI_SOURCE, probe.MPI_TAG, static_cast<unsigned long long>(msg),
             static_cast<unsigned long long>(rts.token));
    written = msg;
    phase = Phase::plain;
    owes_answer = false;  // the stream's copy answers
    path.answer_when(ipc, probe.MPI_SOURCE, rts, msg, copied, std::move(keep));
    path.drain(std::move(ask));
    return true;
  }

  // The agent copies the GPU-direct message at `from` (its data in place).
  Status agent_copy(IpcPath &path) {
    MPIX_TRY(fault_direct_recv_point());
    // The agent copies: into device memory directly where the receive is staged and dense
    // (the staging's copy in then does nothing), else into what the provider receives into
    // (host memory or the bounce buffer, which the staging copies in as usual), else into a
    // temporary to unpack.
    void *dst = op_direct_target(*op);
    const bool to_device = dst != nullptr;  // the staged receive's device (or managed) buffer
    unpack = false;
    if (!dst && contiguous) dst = op->rbuf;
    if (!dst) {
      temp.resize(msg);
      dst = temp.data();
      unpack = true;
    }
    // Batched with the others of this agent loop (flushed at the end of progress).
    MPIX_TRY(
        path.start_copy(rts, static_cast<std::size_t>(msg), dst, to_device, be, device, &ticket));
    MPIX_LOG(trace, "mpi",
             "GPU-direct receive from %d, tag %d: %llu bytes (token %llu), "
             "copied by the agent (ticket %llu)",
             probe.MPI_SOURCE, probe.MPI_TAG, static_cast<unsigned long long>(msg),
             static_cast<unsigned long long>(rts.token), static_cast<unsigned long long>(ticket));
    phase = Phase::copy;
    return {};
  }

  // The GPU-direct copy has run (or was refused): tell the sender, fill in the receive.
  Status copy_done(IpcPath &path) {
    MPIX_LOG(trace, "mpi", "GPU-direct receive from %d: copied (ticket %llu), answering",
             probe.MPI_SOURCE, static_cast<unsigned long long>(ticket));
    if (unpack) MPIX_TRY(unpack_temp(msg));
    else written = msg;
    phase = Phase::plain;
    return answer(path);
  }

  // Tells the sender the outcome (once: a failed MPI_Isend of the answer is not retried).
  Status answer(IpcPath &path) {
    owes_answer = false;
    return path.answer(*ipc, probe.MPI_SOURCE, rts, err, written);
  }

  std::shared_ptr<IpcShared> ipc;

  void finish() {
    MPI_Status st{};
    st.MPI_SOURCE = probe.MPI_SOURCE;
    st.MPI_TAG = probe.MPI_TAG;
    st.MPI_ERROR = err;
    MPI_Status_set_elements_x(&st, MPI_BYTE, static_cast<MPI_Count>(written));
    MPI_Status_set_cancelled(&st, 0);
    op_completed(*op, st);
  }
};

// ---------------------------------------------------------------------------------------------
// The engine.

ChunkEngine::ChunkEngine() = default;
ChunkEngine::~ChunkEngine() = default;

bool ChunkEngine::takes(const Op &op) {
  MpiComm *mc = chunk_comm(op);
  if (!mc) return false;
  if (op.kind == OpKind::recv) return op.peer != MPI_PROC_NULL;
  if (op.kind != OpKind::send) return false;
  return op_pieces(op) > 1 ||
         ((!op_staged(op) || op_staged_on_device(op)) && ipc_send_goes_direct(op, mc->ipc.get()));
}

Status ChunkEngine::announce(Op &op) {
  MpiComm *mc = chunk_comm(op);
  if (!mc || !mc->ipc) return make_status(MPI_ERR_INTERN, "no GPU-direct state to announce on");
  return ipc_.announce_send(op, *mc->ipc);
}

Status ChunkEngine::fire(Op &op) {
  MpiComm *mc = chunk_comm(op);
  if (op.kind == OpKind::recv) return post_recv(op, *mc->matcher, mc->matcher);
  const uint64_t pieces = op_pieces(op);
  if (pieces == 1) return ipc_.fire_send(op, *mc->ipc);
  auto s = std::make_unique<ChunkSend>();
  s->op = &op;
  s->shared = mc->shared;
  s->pieces = pieces;
  MPI_Count size = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(op.dt, &size));
  const uint64_t seq = s->shared->next_seq[op.peer]++;
  s->hdr = ChunkHeader{kChunkMagic, static_cast<uint64_t>(size) * static_cast<uint64_t>(op.count),
                       s->shared->chunk, seq};
  s->tag = static_cast<int>(seq % (static_cast<uint64_t>(s->shared->tag_ub) + 1));
  s->base = static_cast<const char *>(op.sbuf);  // the bounce buffer (a predefined datatype)
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPIX_TRY(two_block_type(s->base, static_cast<int>(s->hdr.chunk), &s->hdr,
                          static_cast<int>(kHeader), &t));
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = MPI_Isend(MPI_BOTTOM, 1, t, op.peer, op.tag, op.comm, &r);
  MPI_Type_free(&t);
  if (rc != MPI_SUCCESS) return mpi_status(rc, "MPI_Isend", __FILE__, __LINE__);
  s->reqs.push_back(r);
  s->posted = 1;
  MPIX_LOG(trace, "mpi", "chunked send to %d, tag %d: %llu bytes in %llu pieces (sequence %llu)",
           op.peer, op.tag, static_cast<unsigned long long>(s->hdr.total),
           static_cast<unsigned long long>(s->pieces), static_cast<unsigned long long>(seq));
  op_posted(op);
  sends_.push_back(std::move(s));
  return {};
}

Status ChunkEngine::post_recv(Op &op, Matcher &m, const std::shared_ptr<Matcher> &owner) {
  m.comm = op.comm;
  op_posted(op);
  for (auto it = m.held.begin(); it != m.held.end(); ++it) {
    const bool src = op.peer == MPI_ANY_SOURCE || op.peer == it->st.MPI_SOURCE;
    const bool tag = op.tag == MPI_ANY_TAG || op.tag == it->st.MPI_TAG;
    if (src && tag) {
      Matcher::Held h = *it;
      m.held.erase(it);
      return start_recv(op, m, h.msg, h.st);
    }
  }
  m.pending.push_back(&op);
  if (!m.active) {
    m.active = true;
    matchers_.push_back(owner);
  }
  return {};
}

Status ChunkEngine::start_recv(Op &op, Matcher &m, MPI_Message msg, const MPI_Status &st) {
  auto r = std::make_unique<ChunkRecv>();
  r->op = &op;
  r->shared = m.shared;
  r->probe = st;
  r->ipc = m.ipc;
  MPI_Count size = 0, tlb = 0, text = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(op.dt, &size));
  MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(op.dt, &tlb, &text));
  r->elem = size > 0 ? static_cast<uint64_t>(size) : 1;
  r->cap = static_cast<uint64_t>(size) * static_cast<uint64_t>(op.count);
  // Bytes in memory in wire order: a predefined datatype without holes.
  r->contiguous = !op.dt_owned && tlb == 0 && text == size;
  const uint64_t bytes = bytes_of(st);
  const std::size_t c = m.shared->chunk;
  MPI_Request req = MPI_REQUEST_NULL;
  if (m.ipc && bytes == sizeof(IpcRts) &&
      m.ipc->direct.size() > static_cast<std::size_t>(st.MPI_SOURCE) &&
      m.ipc->direct[static_cast<std::size_t>(st.MPI_SOURCE)]) {
    r->phase = ChunkRecv::Phase::rts;
    r->temp.resize(sizeof(IpcRts));
    MPIX_MPI_CHECK(
        MPI_Imrecv(r->temp.data(), static_cast<int>(sizeof(IpcRts)), MPI_BYTE, &msg, &req));
  } else if (c > 0 && bytes == c + kHeader) {
    r->phase = ChunkRecv::Phase::first;
    if (r->contiguous && r->cap >= c) {
      MPI_Datatype t = MPI_DATATYPE_NULL;
      MPIX_TRY(
          two_block_type(op.rbuf, static_cast<int>(c), &r->hdr, static_cast<int>(kHeader), &t));
      int rc = MPI_Imrecv(MPI_BOTTOM, 1, t, &msg, &req);
      MPI_Type_free(&t);
      if (rc != MPI_SUCCESS) return mpi_status(rc, "MPI_Imrecv", __FILE__, __LINE__);
    } else {
      r->contiguous = false;
      r->temp.resize(c + kHeader);
      MPIX_MPI_CHECK(
          MPI_Imrecv(r->temp.data(), static_cast<int>(c + kHeader), MPI_BYTE, &msg, &req));
    }
  } else if (bytes <= r->cap) {
    r->phase = ChunkRecv::Phase::plain;
    r->msg = r->written = bytes;
    void *into = nullptr;
    Status space = op_receive_space(op, bytes, &into);
    if (!space.is_ok()) {
      // No bounce buffer for it: take the message off the network all the same, and fail.
      r->err = space.code();
      r->written = 0;
      r->temp.resize(bytes);
      MPIX_LOG(error, "mpi", "receive from %d: %s", st.MPI_SOURCE, space.what().c_str());
      MPIX_MPI_CHECK(MPI_Imrecv(r->temp.data(), static_cast<int>(bytes), MPI_BYTE, &msg, &req));
    } else {
      MPIX_MPI_CHECK(MPI_Imrecv(into, op.count, op.dt, &msg, &req));
    }
  } else {
    // Too long for the receive: take it off the network, report MPI_ERR_TRUNCATE.
    r->phase = ChunkRecv::Phase::plain;
    r->msg = bytes;
    r->err = MPI_ERR_TRUNCATE;
    r->temp.resize(bytes);
    MPIX_MPI_CHECK(MPI_Imrecv(r->temp.data(), static_cast<int>(bytes), MPI_BYTE, &msg, &req));
  }
  r->reqs.push_back(req);
  recvs_.push_back(std::move(r));
  return {};
}

// Takes every message that has arrived on @p m's communicator while receives are pending, each
// to the earliest posted receive it matches (or held for a later one).
bool ChunkEngine::probe(Matcher &m, std::vector<Op *> &done) {
  bool any = false;
  while (!m.pending.empty()) {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, m.comm, &flag, &msg, &st);
    if (rc != MPI_SUCCESS) {
      Op *op = m.pending.front();
      m.pending.pop_front();
      op_failed(*op, mpi_status(rc, "MPI_Improbe", __FILE__, __LINE__));
      done.push_back(op);
      return true;
    }
    if (!flag) break;
    any = true;
    auto it = m.pending.begin();
    for (; it != m.pending.end(); ++it) {
      const Op &o = **it;
      if ((o.peer == MPI_ANY_SOURCE || o.peer == st.MPI_SOURCE) &&
          (o.tag == MPI_ANY_TAG || o.tag == st.MPI_TAG))
        break;
    }
    if (it == m.pending.end()) {
      m.held.push_back(Matcher::Held{msg, st});
      continue;
    }
    Op *op = *it;
    m.pending.erase(it);
    Status s = start_recv(*op, m, msg, st);
    if (!s.is_ok()) {
      op_failed(*op, std::move(s));
      done.push_back(op);
    }
  }
  return any;
}

bool ChunkEngine::progress(std::vector<Op *> &done) {
  bool any = ipc_.busy() && ipc_.progress(done);
  for (std::size_t i = 0; i < matchers_.size();) {
    Matcher &m = *matchers_[i];
    any |= probe(m, done);
    if (m.pending.empty()) {
      m.active = false;
      matchers_[i] = std::move(matchers_.back());
      matchers_.pop_back();
    } else {
      ++i;
    }
  }
  for (std::size_t i = 0; i < sends_.size();) {
    ChunkSend &s = *sends_[i];
    Status st;
    // Piece i goes once the stream has copied it out.
    while (st.is_ok() && s.posted < s.pieces && op_piece_may_go(*s.op, s.posted)) {
      st = s.post_piece(s.posted);
      any = true;
    }
    bool all = false;
    if (st.is_ok() && s.posted == s.pieces) st = test_all(s.reqs, &all);
    if (!st.is_ok() || all) {
      if (st.is_ok()) {
        MPI_Status ms{};
        ms.MPI_SOURCE = s.op->peer;
        ms.MPI_TAG = s.op->tag;
        op_completed(*s.op, ms);
      } else {
        op_failed(*s.op, make_status(st.code(), "chunked send: %s", st.what().c_str()));
      }
      done.push_back(s.op);
      sends_[i] = std::move(sends_.back());
      sends_.pop_back();
      any = true;
      continue;
    }
    ++i;
  }
  for (std::size_t i = 0; i < recvs_.size();) {
    ChunkRecv &r = *recvs_[i];
    bool all = false;
    Status st;
    if (r.phase == ChunkRecv::Phase::copy) {
      if (!r.be->agent_copy_done(r.device, r.ticket)) {
        ++i;
        continue;
      }
      st = r.copy_done(ipc_);
      all = true;
    } else if (r.phase == ChunkRecv::Phase::undecided && r.stream_copy(ipc_)) {
      all = true;  // complete now; the stream copies
    } else if (r.phase == ChunkRecv::Phase::undecided || r.phase == ChunkRecv::Phase::ready) {
      // Decided once, when its wait is first seen queued, as a message matched then would be:
      // waiting on for it to become the stream's next would copy a window of receives one per
      // agent loop (each next only once the one before completed).
      if (op_stream_waits(*r.op)) r.phase = ChunkRecv::Phase::ready;
      int rc = MPI_SUCCESS;
      all = r.ask->done(&rc);
      if (rc != MPI_SUCCESS) st = mpi_status(rc, "GPU-direct READY", __FILE__, __LINE__);
    } else {
      st = r.phase == ChunkRecv::Phase::rest ? r.test_pieces(&all) : test_all(r.reqs, &all);
    }
    bool finished = !st.is_ok();
    if (st.is_ok() && all &&
        (r.phase == ChunkRecv::Phase::undecided || r.phase == ChunkRecv::Phase::ready)) {
      any = true;
      r.ask.reset();
      st = r.agent_copy(ipc_);
      finished = !st.is_ok();
    } else if (st.is_ok() && all && r.phase == ChunkRecv::Phase::rts) {
      any = true;
      r.reqs.clear();
      st = r.rts_done(ipc_);
      finished = !st.is_ok() || r.phase == ChunkRecv::Phase::plain;
    } else if (st.is_ok() && all && r.phase == ChunkRecv::Phase::plain && r.reqs.empty()) {
      finished = true;  // a GPU-direct receive, copied and answered
    } else if (st.is_ok() && all) {
      any = true;
      if (r.phase == ChunkRecv::Phase::first) {
        st = r.first_done();
        finished = !st.is_ok() || r.phase == ChunkRecv::Phase::plain;
      } else {
        if (r.phase == ChunkRecv::Phase::rest && r.err == MPI_SUCCESS) {
          if (r.unpack) st = r.unpack_temp(r.msg);
          else r.written = r.msg;
        }
        finished = true;
      }
    }
    if (finished) {
      if (!st.is_ok()) {
        MPIX_LOG(error, "mpi", "receive from %d: %s", r.probe.MPI_SOURCE, st.what().c_str());
        r.err = st.code();
        if (r.owes_answer) {
          // Failed after matching a GPU-direct header (asking for READY, starting or
          // finishing the copy): the sender completes on this answer, not on the receive.
          r.written = 0;
          Status ans = r.answer(ipc_);
          if (!ans.is_ok())
            MPIX_LOG(error, "mpi", "GPU-direct receive from %d: answering its sender: %s",
                     r.probe.MPI_SOURCE, ans.what().c_str());
        }
      }
      r.finish();
      done.push_back(r.op);
      recvs_[i] = std::move(recvs_.back());
      recvs_.pop_back();
      any = true;
      continue;
    }
    ++i;
  }
  // The batched GPU-direct copies this loop started (their receives wait in Phase::copy).
  Status fl = ipc_.flush_copies();
  if (!fl.is_ok()) MPIX_LOG(error, "mpi", "GPU-direct: %s", fl.what().c_str());
  return any;
}

}  // namespace mpix
