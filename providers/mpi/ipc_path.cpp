#include "providers/mpi/ipc_path.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/op.hpp"
#include "core/stream.hpp"
#include "gpu/ipc_exports.hpp"
#include "providers/mpi/mpi_settings.hpp"

namespace mpix {

namespace {

bool gpu_direct_wanted() { return std::strcmp(setting_str(MpiSetting::gpu_direct), "auto") == 0; }

}  // namespace

const char *ipc_pair_refusal(const IpcPeerInfo &me, const IpcPeerInfo &peer, bool reachable,
                             bool self) {
  if (self) return "itself";
  if (!me.wants) return "GPU-direct is off here (MPIX_GPU_DIRECT=off, no CUDA stream, or no IPC)";
  if (!peer.wants) return "GPU-direct is off at the peer";
  if (me.host != peer.host) return "another node";
  if (me.pid == peer.pid) return "the same process";
  if (!reachable) return "this GPU cannot map the peer's GPU memory (no peer access)";
  return nullptr;
}

bool ipc_may_announce(const IpcPeerInfo &me, const IpcPeerInfo &peer) {
  return !me.host_functions && !peer.host_functions;
}

IpcShared::~IpcShared() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && priv != MPI_COMM_NULL) MPI_Comm_free(&priv);
}

Status ipc_comm_open(MPI_Comm comm, Backend *backend, int device, bool host_functions, bool chunked,
                     std::shared_ptr<IpcShared> *out) {
  out->reset();
  int rank = 0, size = 0;
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPIX_MPI_CHECK(MPI_Comm_size(comm, &size));
  IpcPeerInfo me;
  me.host = ipc_host_hash();
  me.pid = static_cast<int64_t>(getpid());
  me.device = device;
  me.host_functions = host_functions ? 1 : 0;
  // Chunked staging (MPIX_STAGING_CHUNK) has its own protocol on the private tags: not both.
  if (backend && device >= 0 && gpu_direct_wanted() && !chunked &&
      backend->ipc_device_uuid(device, me.uuid).is_ok())
    me.wants = 1;
  std::vector<IpcPeerInfo> all(static_cast<std::size_t>(size));
  MPIX_MPI_CHECK(MPI_Allgather(&me, sizeof me, MPI_BYTE, all.data(), sizeof me, MPI_BYTE, comm));
  // Every rank sees the same table, so every rank takes the same early way out: with fewer than
  // two ranks asking (MPIX_GPU_DIRECT is off by default) nothing more is exchanged or made.
  int wanting = 0;
  for (const IpcPeerInfo &p : all) wanting += p.wants;
  if (wanting < 2) return {};
  // My view of each pair, then both views: a pair is GPU-direct only if both ranks say so
  // (a device may see its peer but not the other way round).
  std::vector<uint8_t> mine(static_cast<std::size_t>(size), 0);
  std::vector<std::string> why(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const IpcPeerInfo &p = all[static_cast<std::size_t>(r)];
    const bool reach = me.wants && p.wants && backend->ipc_can_reach(device, p.uuid);
    const char *no = ipc_pair_refusal(me, p, reach, r == rank);
    mine[static_cast<std::size_t>(r)] = no == nullptr;
    why[static_cast<std::size_t>(r)] = no ? no : "";
  }
  std::vector<uint8_t> views(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
  MPIX_MPI_CHECK(MPI_Allgather(mine.data(), size, MPI_BYTE, views.data(), size, MPI_BYTE, comm));
  auto sh = std::make_shared<IpcShared>();
  sh->direct.assign(static_cast<std::size_t>(size), 0);
  sh->may_announce.assign(static_cast<std::size_t>(size), 0);
  sh->announce = std::make_unique<AnnouncePolicy[]>(static_cast<std::size_t>(size));
  bool any = false;
  for (int r = 0; r < size; ++r) {
    const bool theirs = views[static_cast<std::size_t>(r) * size + rank] != 0;
    const bool both = mine[static_cast<std::size_t>(r)] && theirs;
    sh->direct[static_cast<std::size_t>(r)] = both;
    sh->may_announce[static_cast<std::size_t>(r)] =
        both && ipc_may_announce(me, all[static_cast<std::size_t>(r)]);
    any |= both;
    if (r == rank) continue;
    if (both)
      MPIX_LOG(info, "mpi", "peer %d: GPU-direct (%s, %s GPU%s)", r,
               backend->kind() == StreamKind::host ? "MPIX_HOST_IPC: shared memory in its place"
                                                   : "CUDA IPC",
               std::memcmp(me.uuid, all[static_cast<std::size_t>(r)].uuid, 16) ? "peer" : "same",
               sh->may_announce[static_cast<std::size_t>(r)]
                   ? ""
                   : "; sends not announced: host-function triggers");
    else
      MPIX_LOG(info, "mpi", "peer %d: staged path (%s)", r,
               mine[static_cast<std::size_t>(r)] ? "the peer cannot map this GPU's memory"
                                                 : why[static_cast<std::size_t>(r)].c_str());
  }
  // The split is collective: every rank makes it if any pair (the same answer everywhere, from
  // the same views) is GPU-direct, even a rank with no direct peer of its own.
  bool any_pair = false;
  for (int i = 0; i < size && !any_pair; ++i)
    for (int j = i + 1; j < size && !any_pair; ++j)
      any_pair = views[static_cast<std::size_t>(i) * size + j] &&
                 views[static_cast<std::size_t>(j) * size + i];
  if (!any_pair) return {};
  MPI_Comm priv = MPI_COMM_NULL;
  MPIX_MPI_CHECK(MPI_Comm_split(comm, 0, rank, &priv));
  if (!any) {
    MPI_Comm_free(&priv);
    return {};
  }
  sh->priv = priv;
  MPIX_MPI_CHECK(MPI_Comm_set_errhandler(sh->priv, MPI_ERRORS_RETURN));
  int *ub = nullptr, flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  if (flag && ub) sh->tag_ub = *ub;
  sh->device = device;
  sh->backend = backend;
  *out = std::move(sh);
  return {};
}

namespace {

// A gated op (a partition of a partitioned send, src/partitioned) has no stream: its buffer is
// on the device of its communicator's stream, whose backend the IpcShared holds.
bool gated(const Op &op) { return !op.stream && op.gate; }

// ipc_send_goes_direct but for the buffer's memory kind.
bool send_fits_direct(const Op &op, const IpcShared *ipc) {
  if (!ipc || op.kind != OpKind::send || op.count <= 0 || op.dt_owned) return false;
  if (!op.stream && !gated(op)) return false;
  if (op.peer < 0 || static_cast<std::size_t>(op.peer) >= ipc->direct.size() ||
      !ipc->direct[static_cast<std::size_t>(op.peer)])
    return false;
  if (op.stream && op.stream->backend() != ipc->backend) return false;
  // A predefined type with holes (MPI_DOUBLE_INT, ...) is not a byte range.
  MPI_Aint lb = 0, extent = 0;
  int size = 0;
  if (MPI_Type_size(op.dt, &size) != MPI_SUCCESS ||
      MPI_Type_get_extent(op.dt, &lb, &extent) != MPI_SUCCESS)
    return false;
  if (lb != 0 || extent != size || size <= 0) return false;
  // A partition's message goes GPU-direct at every size: the receiver's round has posted its
  // receive (a partitioned send may wait for its receiver), and a staged partition costs two
  // synchronous agent copies.
  if (gated(op)) return true;
  // Small messages stay eager (staged): a GPU-direct send completes only once the receiver has
  // copied it, and programs rely on small blocking sends completing before their receive.
  return static_cast<uint64_t>(size) * static_cast<uint64_t>(op.count) > ipc_eager_max();
}

}  // namespace

uint64_t ipc_eager_max() {
  static const uint64_t most =
      static_cast<uint64_t>(setting_long(MpiSetting::gpu_direct_eager_max));
  return most;
}

bool ipc_send_goes_direct(const Op &op, const IpcShared *ipc) {
  return send_fits_direct(op, ipc) && ipc->backend->classify(op.sbuf) == MemKind::device;
}

DeviceRead ipc_send_read(const Op &op, const IpcShared *ipc) {
  if (!send_fits_direct(op, ipc)) return DeviceRead::no;
  // Device memory, and which allocation, in one pointer query (ipc_range fails elsewhere).
  uint64_t start = 0, bytes = 0, id = 0;
  if (!ipc->backend->ipc_range(op.sbuf, &start, &bytes, &id).is_ok()) return DeviceRead::no;
  if (!ipc_exports().overlaps_other(start, bytes, id)) return DeviceRead::as_is;
  // The device copy is a copy on the op's stream: a gated op has none, and is staged.
  if (gated(op)) return DeviceRead::no;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    MPIX_LOG(info, "mpi",
             "GPU-direct: a send buffer lies where an allocation sent from before was freed (a "
             "receiver may still map that one): sends from it are copied into a device buffer "
             "of mpix's first (allocate communication buffers once to spare the copy)");
  return DeviceRead::from_device_copy;
}

bool ipc_stream_copies() {
  static const bool on = std::strcmp(setting_str(MpiSetting::gpu_direct_copy), "stream") == 0;
  return on;
}

bool ipc_may_receive_direct(const Op &op, const IpcShared *ipc) {
  if (!ipc || op.kind != OpKind::recv || op.peer == MPI_PROC_NULL) return false;
  // A communicator has IpcShared only where this rank has a GPU-direct peer (ipc_comm_open).
  if (op.peer == MPI_ANY_SOURCE) return true;
  return op.peer >= 0 && static_cast<std::size_t>(op.peer) < ipc->direct.size() &&
         ipc->direct[static_cast<std::size_t>(op.peer)];
}

IpcPath::~IpcPath() = default;  // the cache unmaps what this process mapped (agent stopped)

bool ipc_gpu_completion() {
  static const bool on = std::strcmp(setting_str(MpiSetting::gpu_direct_completion), "gpu") == 0;
  return on;
}

AnnounceMode ipc_announce_mode() {
  static const AnnounceMode mode = [] {
    const char *v = setting_str(MpiSetting::gpu_direct_announce);
    return std::strcmp(v, "off") == 0      ? AnnounceMode::off
           : std::strcmp(v, "always") == 0 ? AnnounceMode::always
                                           : AnnounceMode::adaptive;
  }();
  return mode;
}

Status IpcPath::post_send(Op &op, IpcShared &ipc, const IpcEarly *e, bool announced) {
  auto s = std::make_unique<Send>();
  s->op = &op;
  s->ipc = &ipc;
  s->peer = op.peer;
  IpcRts &h = s->rts;
  h.magic = kIpcRtsMagic;
  int size = 0;
  MPIX_MPI_CHECK(MPI_Type_size(op.dt, &size));
  h.bytes = static_cast<uint64_t>(size) * static_cast<uint64_t>(op.count);
  static const uint64_t host = ipc_host_hash();
  h.host = host;
  h.pid = static_cast<int64_t>(getpid());
  Backend *be = ipc.backend;
  uint64_t alloc_bytes = 0;
  MPIX_TRY(be->ipc_range(op.sbuf, &h.base, &alloc_bytes, &h.buffer_id));
  h.offset = reinterpret_cast<uint64_t>(op.sbuf) - h.base;
  // cudaIpcGetMemHandle once per allocation: keyed by its start, checked by its buffer id.
  MPIX_TRY(ipc_exports().handle(h.base, alloc_bytes, h.buffer_id, be, h.handle));
  if (e) {
    const ReadyWord &w = e->ready;
    h.early = announced ? 1 : 0;
    h.done = e->done ? 1 : 0;
    h.ready_value = w.value;
    h.ready_base = w.slab_base;
    h.ready_id = w.slab_id;
    h.ready_offset = reinterpret_cast<uint64_t>(w.word) - w.slab_base;
    h.ready_slab_bytes = w.slab_bytes;
    MPIX_TRY(ipc_exports().handle(w.slab_base, w.slab_bytes, w.slab_id, be, h.ready_handle));
  }
  h.token = ipc.next_token[op.peer]++;
  MPIX_MPI_CHECK(MPI_Irecv(&s->fin, sizeof s->fin, MPI_BYTE, op.peer, ipc.fin_tag(h.token),
                           ipc.priv, &s->reqs[1]));
  int rc = MPI_Isend(&s->rts, sizeof s->rts, MPI_BYTE, op.peer, op.tag, op.comm, &s->reqs[0]);
  if (rc != MPI_SUCCESS) {
    MPI_Cancel(&s->reqs[1]);
    MPI_Request_free(&s->reqs[1]);
    return mpi_status(rc, "MPI_Isend", __FILE__, __LINE__);
  }
  MPIX_LOG(trace, "mpi", "GPU-direct send to %d, tag %d: %llu bytes (token %llu)%s%s", op.peer,
           op.tag, static_cast<unsigned long long>(h.bytes),
           static_cast<unsigned long long>(h.token), announced ? ", announced" : "",
           h.done ? ", completed on the GPU" : "");
  if (announced) {
    // Untested until the stream reaches it: nothing it waits for can come before (a FIN or
    // WANT waits in MPI), and a loop over hundreds of sends enqueued ahead would cost each
    // agent loop that many MPI calls.
    announced_.emplace(&op, std::move(s));
    return {};
  }
  op_posted(op);
  sends_.push_back(std::move(s));
  return {};
}

Status IpcPath::announce_send(Op &op, IpcShared &ipc) {
  return post_send(op, ipc, static_cast<const IpcEarly *>(op.prov), true);
}

namespace {

// Ends what arm() made for @p op (MpiProvider::arm): the word serves again.
void early_release(Op &op) {
  auto *e = static_cast<IpcEarly *>(op.prov);
  if (!e) return;
  ready_word_give(e->ready);
  delete e;
  op.prov = nullptr;
}

}  // namespace

Status IpcPath::fire_send(Op &op, IpcShared &ipc) {
  auto *e = static_cast<IpcEarly *>(op.prov);
  if (e && e->announced) {
    auto it = announced_.find(&op);
    if (it == announced_.end())
      return make_status(MPI_ERR_INTERN, "GPU-direct: announced send to %d not found", op.peer);
    // From now on tested every loop (progress): a WANT that came already is answered there.
    op_posted(op);
    sends_.push_back(std::move(it->second));
    announced_.erase(it);
    return {};
  }
  // The stream wrote the ready word before the trigger this fire follows: the word is free,
  // unless the receiver's copy is to set it (done: kept until the answer, finish_send).
  if (e && !e->done) {
    early_release(op);
    e = nullptr;
  }
  return post_send(op, ipc, e, false);
}

void IpcPath::drop_announced(Op &op) {
  auto *e = static_cast<IpcEarly *>(op.prov);
  if (!e) return;
  if (e->announced) {
    Status st = ready_word_force(e->ready);
    if (!st.is_ok())
      MPIX_LOG(error, "mpi", "GPU-direct: a failed send's ready word stays unwritten (%s)",
               st.what().c_str());
    auto it = announced_.find(&op);
    if (it != announced_.end()) {
      // Kept until the receiver answers (a WANT it sent is answered by progress).
      it->second->op = nullptr;
      sends_.push_back(std::move(it->second));
      announced_.erase(it);
    }
    // The word is not given back: the receiver may read it until it answers.
    delete e;
    op.prov = nullptr;
    return;
  }
  early_release(op);
}

Status IpcPath::send_ready(Send &s) {
  s.ready = IpcFin{kIpcReadyMagic, s.rts.token, 0, 0};
  MPIX_MPI_CHECK(MPI_Isend(&s.ready, sizeof s.ready, MPI_BYTE, s.peer,
                           s.ipc->ready_tag(s.rts.token), s.ipc->priv, &s.reqs[2]));
  return {};
}

void IpcPath::finish_send(Send &s) {
  Op *op = s.op;
  if (!op) return;  // dropped: its op failed already
  auto *e = static_cast<IpcEarly *>(op->prov);
  if (e) {
    ready_word_give(e->ready);
    delete e;
    op->prov = nullptr;
  }
  if (s.err != MPI_SUCCESS) {
    op_failed(*op, mpi_status(s.err, "GPU-direct send", __FILE__, __LINE__));
  } else if (s.fin.magic != kIpcFinMagic) {
    op_failed(*op,
              make_status(MPI_ERR_INTERN, "GPU-direct send to %d: malformed answer", op->peer));
  } else {
    // A truncated receive is the receiver's error; the send itself succeeded.
    MPI_Status st{};
    st.MPI_SOURCE = op->peer;
    st.MPI_TAG = op->tag;
    st.MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements_x(&st, MPI_BYTE, static_cast<MPI_Count>(s.rts.bytes));
    op_completed(*op, st);
  }
  // The agent completes it after this loop's progress, which may match the next header from
  // this peer first: that receive's stream copy must not take this wait for pending.
  if (op->stream) op->stream->wait_order().mark_released(op->done.word, op->done_value);
}

void IpcPath::announce_learn(const Send &s, bool want) {
  if (!s.rts.early || ipc_announce_mode() != AnnounceMode::adaptive || !s.ipc) return;
  AnnouncePolicy *p = s.ipc->policy(s.peer);
  if (!p) return;
  if (!want) {
    if (!s.wanted) p->stream_copied();
    return;
  }
  p->wanted();
  MPIX_LOG(debug, "mpi",
           "GPU-direct: rank %d's agent copied an announced send: the next %u sends to it go "
           "unannounced",
           s.peer, p->pause());
}

bool IpcPath::progress(std::vector<Op *> &done) {
  bool any = false;
  for (std::size_t i = 0; i < sends_.size();) {
    Send &s = *sends_[i];
    int n = 0, idx[3];
    if (s.err == MPI_SUCCESS) {
      int rc = MPI_Testsome(3, s.reqs, &n, idx, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) s.err = rc;
      for (int k = 0; rc == MPI_SUCCESS && n != MPI_UNDEFINED && k < n; ++k) {
        if (idx[k] != 1) continue;
        any = true;
        announce_learn(s, s.fin.magic == kIpcWantMagic);
        if (s.fin.magic != kIpcWantMagic) {
          s.fin_in = true;
          continue;
        }
        s.wanted = true;
        // The receiver copies with its agent: READY now (the stream reached the send); the
        // answer proper comes after its copy.
        rc = MPI_Irecv(&s.fin, sizeof s.fin, MPI_BYTE, s.peer, s.ipc->fin_tag(s.rts.token),
                       s.ipc->priv, &s.reqs[1]);
        if (rc != MPI_SUCCESS) s.err = rc;
        else s.err = send_ready(s).code();
      }
    }
    const bool over = s.err != MPI_SUCCESS ||
                      (s.fin_in && s.reqs[0] == MPI_REQUEST_NULL && s.reqs[2] == MPI_REQUEST_NULL);
    if (!over) {
      ++i;
      continue;
    }
    if (s.op) {
      finish_send(s);
      done.push_back(s.op);
    }
    sends_[i] = std::move(sends_.back());
    sends_.pop_back();
    any = true;
  }
  for (std::size_t i = 0; i < copies_.size();) {
    StreamCopy &c = copies_[i];
    if (load_signal(c.copied) == 0) {
      ++i;
      continue;
    }
    Status st = answer(*c.ipc, c.source, c.rts, 0, c.bytes);
    if (!st.is_ok())  // the sender waits for an answer that cannot be sent: say why
      MPIX_LOG(error, "mpi", "GPU-direct: answering rank %d failed: %s", c.source,
               st.what().c_str());
    copies_[i] = std::move(copies_.back());
    copies_.pop_back();
    any = true;
  }
  for (std::size_t i = 0; i < drains_.size();) {
    int rc = MPI_SUCCESS;
    if (!drains_[i]->done(&rc)) {
      ++i;
      continue;
    }
    drains_[i] = std::move(drains_.back());
    drains_.pop_back();
    any = true;
  }
  for (std::size_t i = 0; i < fins_.size();) {
    int flag = 0;
    if (MPI_Test(&fins_[i]->req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
      ++i;
      continue;
    }
    fins_[i] = std::move(fins_.back());
    fins_.pop_back();
    any = true;
  }
  return any;
}

Status IpcPath::map_source(const IpcRts &rts, Backend *be, int device, const char **src) {
  char *base = nullptr;
  const IpcMapCache::Key k{rts.host,      rts.pid,    rts.base,
                           rts.buffer_id, rts.handle, rts.offset + rts.bytes};
  MPIX_TRY(maps_.map(k, be, device, &base));
  *src = base + rts.offset;
  return {};
}

Status IpcPath::map_ready(const IpcRts &rts, Backend *be, int device, const uint64_t **word) {
  char *base = nullptr;
  const IpcMapCache::Key k{rts.host,     rts.pid,          rts.ready_base,
                           rts.ready_id, rts.ready_handle, rts.ready_offset + sizeof(uint64_t)};
  MPIX_TRY(maps_.map(k, be, device, &base));
  *word = reinterpret_cast<const uint64_t *>(base + rts.ready_offset);
  return {};
}

Status IpcPath::ask_ready(IpcShared &ipc, int source, const IpcRts &rts,
                          std::unique_ptr<IpcAsk> *out) {
  auto a = std::make_unique<IpcAsk>();
  a->want = IpcFin{kIpcWantMagic, rts.token, 0, 0};
  MPIX_MPI_CHECK(MPI_Irecv(&a->ready, sizeof a->ready, MPI_BYTE, source, ipc.ready_tag(rts.token),
                           ipc.priv, &a->reqs[1]));
  int rc = MPI_Isend(&a->want, sizeof a->want, MPI_BYTE, source, ipc.fin_tag(rts.token), ipc.priv,
                     &a->reqs[0]);
  if (rc != MPI_SUCCESS) {
    MPI_Cancel(&a->reqs[1]);
    MPI_Request_free(&a->reqs[1]);
    return mpi_status(rc, "MPI_Isend", __FILE__, __LINE__);
  }
  *out = std::move(a);
  return {};
}

bool IpcAsk::done(int *rc) {
  int flag = 0;
  *rc = MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
  return *rc != MPI_SUCCESS || flag;
}

void IpcPath::drain(std::unique_ptr<IpcAsk> ask) {
  if (ask) drains_.push_back(std::move(ask));
}

Status IpcPath::start_copy(const IpcRts &rts, std::size_t bytes, void *dst, bool dst_on_device,
                           Backend *be, int device, uint64_t *ticket) {
  const char *src = nullptr;
  MPIX_TRY(map_source(rts, be, device, &src));
  // The source is the sender's device memory, mapped here.
  MPIX_TRY(be->agent_copy_deferred(device, dst, src, bytes, dst_on_device, ticket));
  for (const auto &u : unflushed_)
    if (u.first == be && u.second == device) return {};
  unflushed_.emplace_back(be, device);
  return {};
}

Status IpcPath::flush_copies() {
  Status first;
  for (const auto &u : unflushed_) {
    Status st = u.first->agent_copy_flush(u.second);
    if (!st.is_ok() && first.is_ok()) first = std::move(st);
  }
  unflushed_.clear();
  return first;
}

void IpcPath::answer_when(const std::shared_ptr<IpcShared> &ipc, int source, const IpcRts &rts,
                          uint64_t bytes, const uint64_t *copied,
                          std::shared_ptr<const void> keep) {
  copies_.push_back(StreamCopy{ipc, source, rts, bytes, copied, std::move(keep)});
}

Status IpcPath::answer(IpcShared &ipc, int source, const IpcRts &rts, int error, uint64_t bytes) {
  auto f = std::make_unique<Fin>();
  f->fin = IpcFin{kIpcFinMagic, rts.token, error, bytes};
  MPIX_MPI_CHECK(MPI_Isend(&f->fin, sizeof f->fin, MPI_BYTE, source, ipc.fin_tag(rts.token),
                           ipc.priv, &f->req));
  fins_.push_back(std::move(f));
  return {};
}

}  // namespace mpix
