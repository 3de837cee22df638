#include "core/staging.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/settings.hpp"
#include "base/waiter.hpp"
#include "core/op.hpp"
#include "core/typemap.hpp"
#include "gpu/backend.hpp"

namespace mpix {
namespace {

// Receives of at most this many bytes copy in with the stream's length-reading kernel; larger
// ones fill the bounce buffer first and copy in whole with the copy engine (staging_copy_out).
constexpr std::size_t kClipKernelMax = 4096;

struct Bounce {
  Backend *be = nullptr;
  char *p = nullptr;
  std::size_t cap = 0;
};

// Smallest power of two >= bytes, at least one page.
std::size_t size_class(std::size_t bytes) {
  std::size_t c = 4096;
  while (c < bytes) c <<= 1;
  return c;
}

class Pool {
 public:
  Status acquire(Backend *be, std::size_t bytes, Bounce *out) {
    std::size_t cap = size_class(bytes);
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = free_.find({be, cap});
      if (it != free_.end()) {
        auto &v = it->second;
        // Newest first: a buffer released a moment ago is likely still in the CPU caches.
        for (std::size_t i = v.size(); i-- > 0;) {
          // A buffer whose stream may still copy out of it is skipped, not waited for.
          if (v[i].word && !reached(load_signal(v[i].word), v[i].value)) continue;
          *out = v[i].b;
          v[i] = v.back();
          v.pop_back();
          --cached_;
          ++in_use_;
          return {};
        }
      }
    }
    void *p = nullptr;
    MPIX_TRY(be->alloc_pinned(cap, &p));
    MPIX_LOG(debug, "stream", "staging: new %zu-byte bounce buffer", cap);
    std::lock_guard<std::mutex> lk(mu_);
    *out = Bounce{be, static_cast<char *>(p), cap};
    ++in_use_;
    bytes_ += cap;
    return {};
  }

  // Back to the pool; reusable once *word reaches value (no condition when word is null).
  void release(const Bounce &b, const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    free_[{b.be, b.cap}].push_back(Entry{b, word, value});
    --in_use_;
    ++cached_;
  }

  StagingPoolStats stats() {
    std::lock_guard<std::mutex> lk(mu_);
    return StagingPoolStats{cached_, in_use_, bytes_};
  }

 private:
  struct Entry {
    Bounce b;
    const uint64_t *word;
    uint64_t value;
  };
  std::mutex mu_;
  std::map<std::pair<Backend *, std::size_t>, std::vector<Entry>> free_;
  std::size_t cached_ = 0, in_use_ = 0, bytes_ = 0;
};

Pool &pool() {
  static Pool *p = new Pool;  // never destroyed: streams may still copy at exit
  return *p;
}

}  // namespace

struct Staging {
  // The span of a (buffer, count, datatype) from its true lower bound, in the user's buffer and
  // in the bounce buffer (same layout). A datatype with gaps copies only its typemap's blocks,
  // `runs`, a table kept in the bounce buffer after the span: pinned, so that a GPU kernel may
  // read it, and released with the buffer, once no copy can use it any more.
  struct Copy {
    char *user = nullptr;
    char *bounce = nullptr;
    std::size_t bytes = 0;
    const CopyRun *runs = nullptr;  // null: the span is dense, one copy
    std::size_t nruns = 0;
  };

  Backend *be = nullptr;
  Bounce bufs[2];
  int nbufs = 0;
  Copy out[2];  // device -> bounce, before the trigger
  int nout = 0;
  Copy in;  // bounce -> device, after the completion wait
  bool has_in = false;
  // A receive (not an allreduce, whose result fills its buffer): the message may be shorter.
  bool short_ok = false;
  uint64_t *len_word = nullptr;  // received bytes, in the receive's bounce buffer (pinned)
  bool clip = false;             // copy in only the received prefix (decided at copy out)
  bool by_length = false;        // clip at any size (staging_copy_in_by_length)
  std::size_t chunk = 0;         // a chunked send: pieces of this many bytes
  uint64_t pieces = 1;
  // A receive on a chunk-enabled communicator that may get a chunked message: the stream copies
  // piece i in once the agent says it arrived (piece_word >= i + 1), overlapping the transfer of
  // the later ones. Decided at copy out (needs clip).
  std::size_t recv_chunk = 0;
  uint64_t *piece_word = nullptr;  // pieces of the message in the bounce buffer (pinned)
  bool pipelined = false;
  std::atomic<bool> copied_in{false};
  bool delivered = false;  // agent thread: the message went straight into the user's buffer
  const uint64_t *release_word = nullptr;  // the stream's trigger word, once a copy-in is queued
  uint64_t release_value = 0;
  // Small dense messages: the agent copies, not the stream (staging_use_agent).
  bool on_agent = false;
  int agent_dev = -1;
  uint64_t agent_ticket = 0;  // the agent's last copy of this op
  std::size_t agent_in = 0;   // bytes of a chunked receive the agent has copied in so far

  ~Staging() {
    for (int i = 0; i < nbufs; ++i) pool().release(bufs[i], release_word, release_value);
  }

  // A bounce buffer for the region of @p user; returns its counterpart of @p user. With
  // @p len_word, also a word for the received length, after the span (and table).
  Status stage(char *user, int count, MPI_Datatype dt, Copy *c, char **bounce_view,
               uint64_t **len_word = nullptr, uint64_t **piece_word = nullptr) {
    TypeLayout lay;
    MPIX_TRY(typemap_layout(count, dt, &lay));
    const std::ptrdiff_t off = lay.lb;
    const std::size_t table_at =
        (lay.span + alignof(CopyRun) - 1) / alignof(CopyRun) * alignof(CopyRun);
    const std::size_t end = lay.dense() ? table_at : table_at + lay.runs.size() * sizeof(CopyRun);
    const std::size_t bytes = len_word ? end + 2 * sizeof(uint64_t) : lay.dense() ? lay.span : end;
    Bounce b;
    MPIX_TRY(pool().acquire(be, bytes, &b));
    if (len_word) {
      *len_word = reinterpret_cast<uint64_t *>(b.p + end);
      store_signal(*len_word, lay.span);  // all of it, unless the agent says otherwise
      *piece_word = *len_word + 1;
      store_signal(*piece_word, 0);
    }
    bufs[nbufs++] = b;
    c->user = user + off;
    c->bounce = b.p;
    c->bytes = lay.span;
    if (!lay.dense()) {
      std::memcpy(b.p + table_at, lay.runs.data(), lay.runs.size() * sizeof(CopyRun));
      c->runs = reinterpret_cast<const CopyRun *>(b.p + table_at);
      c->nruns = lay.runs.size();
    }
    // The provider addresses the buffer as the user did: base = bounce - true lower bound.
    *bounce_view = b.p - off;
    return {};
  }
};

Status staging_setup(Op &op, Backend &be, bool provider_device_memory, std::size_t chunk) {
  if (provider_device_memory || op.count == 0) return {};
  // Classify the first byte the datatype touches, not the buffer argument: with a positive
  // true lower bound (a subarray, say) the argument may lie before the allocation, where the
  // GPU runtime sees no device memory at all.
  // Named types start at their buffer; only a derived one (held as a duplicate) needs asking,
  // which keeps the MPI call off the enqueue path of the common case.
  MPI_Count tlb = 0, text = 0;
  if (op.dt_owned) MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(op.dt, &tlb, &text));
  // MPIX_STAGING_HOST (tests): host streams stage their host buffers too.
  static const bool stage_host = setting_long(Setting::staging_host) != 0;
  auto needs = [&](const void *p) {
    if (!p || p == MPI_IN_PLACE) return false;
    if (stage_host && be.kind() == StreamKind::host) return true;
    MemKind mk = be.classify(static_cast<const char *>(p) + tlb);
    return mk == MemKind::device || mk == MemKind::managed;
  };
  bool s = (op.kind == OpKind::send || op.kind == OpKind::allreduce) && needs(op.sbuf);
  bool r = (op.kind == OpKind::recv || op.kind == OpKind::allreduce) && needs(op.rbuf);
  if (!s && !r) return {};
  auto stg = std::make_shared<Staging>();
  stg->be = &be;
  if (s) {
    char *view = nullptr;
    MPIX_TRY(stg->stage(const_cast<char *>(static_cast<const char *>(op.sbuf)), op.count, op.dt,
                        &stg->out[stg->nout], &view));
    ++stg->nout;
    op.sbuf = view;
    // Only a predefined datatype is chunked: its bytes in memory are its bytes on the wire, so
    // a piece is a plain byte range whatever the receiver's datatype.
    const Staging::Copy &c = stg->out[0];
    if (chunk && op.kind == OpKind::send && !op.dt_owned && !c.runs && c.bytes > chunk) {
      stg->chunk = chunk;
      stg->pieces = (c.bytes + chunk - 1) / chunk;
    }
  }
  if (r) {
    char *view = nullptr;
    stg->short_ok = op.kind == OpKind::recv;
    MPIX_TRY(stg->stage(static_cast<char *>(op.rbuf), op.count, op.dt, &stg->in, &view,
                        stg->short_ok ? &stg->len_word : nullptr, &stg->piece_word));
    stg->has_in = true;
    if (chunk && stg->short_ok && !op.dt_owned && !stg->in.runs && stg->in.bytes > chunk)
      stg->recv_chunk = chunk;
    // An in-place allreduce reads its input from the receive buffer too.
    if (op.kind == OpKind::allreduce && op.sbuf == MPI_IN_PLACE) stg->out[stg->nout++] = stg->in;
    op.rbuf = view;
  }
  op.staging = std::move(stg);
  return {};
}

void staging_copy_in_by_length(Staging &stg) { stg.by_length = true; }

uint64_t staging_pieces(const Staging &stg) { return stg.pieces; }
std::size_t staging_chunk(const Staging &stg) { return stg.chunk; }

Status staging_copy_out(Staging &stg, ExecStream &ex, uint64_t *trigger_word,
                        uint64_t first_threshold) {
  if (stg.on_agent) return {};
  if (stg.pieces > 1) {
    const Staging::Copy &c = stg.out[0];
    for (uint64_t i = 0; i < stg.pieces; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) * stg.chunk;
      const std::size_t n = c.bytes - at < stg.chunk ? c.bytes - at : stg.chunk;
      MPIX_TRY(ex.copy_async(c.bounce + at, c.user + at, n));
      if (i + 1 < stg.pieces) MPIX_TRY(ex.write_value(trigger_word, first_threshold + i));
    }
    return {};
  }
  for (int i = 0; i < stg.nout; ++i) {
    const Staging::Copy &c = stg.out[i];
    MPIX_TRY(c.runs ? ex.copy_runs_async(c.bounce, c.user, c.runs, c.nruns)
                    : ex.copy_async(c.bounce, c.user, c.bytes));
  }
  if (stg.short_ok) {
    // A receive copies in only the message's bytes (see staging.hpp): by length where the
    // stream can read the length at run time, else by filling the bounce buffer with what the
    // receive buffer holds now, before the trigger, so that the bytes past the message are
    // copied back unchanged. The length-reading copy is a kernel reading pinned host memory,
    // which measured far slower than the copy engine (4 MiB: ~2.2 ms against ~0.1 ms, one
    // H200): above kClipKernelMax bytes two copy-engine copies are cheaper, except for a
    // pipelined (chunked) receive, whose pieces need the length.
    const Staging::Copy &c = stg.in;
    stg.clip = !c.runs && (c.bytes <= kClipKernelMax || stg.recv_chunk || stg.by_length) &&
               ex.can_copy_prefix(c.user, c.bounce, stg.len_word);
    stg.pipelined = stg.clip && stg.recv_chunk;
    if (!stg.clip)
      MPIX_TRY(c.runs ? ex.copy_runs_async(c.bounce, c.user, c.runs, c.nruns)
                      : ex.copy_async(c.bounce, c.user, c.bytes));
  }
  return {};
}

void staging_received(Staging &stg, const MPI_Status &st) {
  if (!stg.len_word) return;
  MPI_Count n = 0;
  MPI_Status copy = st;  // MPI_Get_elements_x takes a non-const status in MPI-3 bindings
  if (MPI_Get_elements_x(&copy, MPI_BYTE, &n) != MPI_SUCCESS || n < 0) n = 0;
  if (stg.delivered) n = 0;  // already in place: the stream's copy in copies nothing
  store_signal(stg.len_word, static_cast<uint64_t>(n));
  // Every piece wait of a pipelined copy in passes now (pieces past the message copy nothing).
  store_signal(stg.piece_word, uint64_t{1} << 62);
}

void staging_pieces_arrived(Staging &stg, uint64_t len, uint64_t pieces) {
  if (stg.on_agent && stg.recv_chunk && stg.has_in) {
    // The agent copies in: each piece as it arrives, overlapping the later pieces' transfer;
    // staging_agent_copy_in copies what is left at completion.
    const Staging::Copy &c = stg.in;
    uint64_t upto = pieces * stg.recv_chunk;
    if (upto > len) upto = len;
    if (upto > c.bytes) upto = c.bytes;
    if (upto <= stg.agent_in) return;
    Status st =
        stg.be->agent_copy(stg.agent_dev, c.user + stg.agent_in, c.bounce + stg.agent_in,
                           static_cast<std::size_t>(upto) - stg.agent_in, &stg.agent_ticket);
    if (st.is_ok()) stg.agent_in = static_cast<std::size_t>(upto);
    else MPIX_LOG(warn, "stream", "copying a piece in (left for the end): %s", st.what().c_str());
    return;
  }
  if (!stg.pipelined) return;
  store_signal(stg.len_word, len);  // before the pieces it covers are released
  store_signal(stg.piece_word, pieces);
}

bool staging_pipelined(const Staging &stg) { return stg.pipelined; }

Status staging_copy_in_pieces(Staging &stg, ExecStream &ex) {
  if (!stg.pipelined) return {};
  const Staging::Copy &c = stg.in;
  const std::size_t C = stg.recv_chunk;
  for (std::size_t at = 0, i = 0; at < c.bytes; at += C, ++i) {
    MPIX_TRY(ex.wait_value(stg.piece_word, i + 1));
    MPIX_TRY(ex.copy_prefix_async(c.user + at, c.bounce + at, c.bytes - at < C ? c.bytes - at : C,
                                  stg.len_word, at));
  }
  return {};
}

Status staging_copy_in(Staging &stg, ExecStream &ex, const uint64_t *trigger_word,
                       uint64_t next_threshold) {
  // Claimed once: a host MPI_Wait / MPI_Test on the request after this (a queue request stays
  // user-visible) must not copy again, over what later stream work wrote to the buffer.
  if (stg.on_agent || !stg.has_in || stg.copied_in.exchange(true)) return {};
  const Staging::Copy &c = stg.in;
  // A pipelined receive was copied in piece by piece (staging_copy_in_pieces) before its wait.
  if (stg.clip && !stg.pipelined)
    MPIX_TRY(ex.copy_prefix_async(c.user, c.bounce, c.bytes, stg.len_word));
  else if (!stg.clip)
    MPIX_TRY(c.runs ? ex.copy_runs_async(c.user, c.bounce, c.runs, c.nruns)
                    : ex.copy_async(c.user, c.bounce, c.bytes));
  stg.release_word = trigger_word;
  stg.release_value = next_threshold;
  return {};
}

Status staging_copy_in_on_host(Staging &stg) {
  if (!stg.has_in || stg.copied_in.exchange(true) || stg.delivered) return {};
  const Staging::Copy &c = stg.in;
  if (stg.clip) {
    const uint64_t n = load_signal(stg.len_word);
    return stg.be->copy_sync(c.user, c.bounce, n < c.bytes ? static_cast<std::size_t>(n) : c.bytes);
  }
  return c.runs ? stg.be->copy_runs_sync(c.user, c.bounce, c.runs, c.nruns)
                : stg.be->copy_sync(c.user, c.bounce, c.bytes);
}

void staging_use_agent(Staging &stg, int device) {
  static const long most = setting_long(Setting::agent_copy_max);
  // A chunked send keeps the stream's piece-by-piece copies, each followed by its trigger.
  if (most == 0 || stg.pieces > 1) return;
  auto small = [&](const Staging::Copy &c) {
    return !c.runs && (most < 0 || c.bytes <= static_cast<std::size_t>(most));
  };
  for (int i = 0; i < stg.nout; ++i)
    if (!small(stg.out[i])) return;
  if (stg.has_in && !small(stg.in)) return;
  stg.on_agent = true;
  stg.agent_dev = device;
}

Status staging_use_agent_always(Staging &stg, int device) {
  for (int i = 0; i < stg.nout; ++i)
    if (stg.out[i].runs)
      return make_status(MPI_ERR_TYPE,
                         "a device buffer with a non-contiguous datatype cannot be staged "
                         "here (the agent copies dense ranges only)");
  if (stg.has_in && stg.in.runs)
    return make_status(MPI_ERR_TYPE,
                       "a device buffer with a non-contiguous datatype cannot be staged "
                       "here (the agent copies dense ranges only)");
  stg.on_agent = true;
  stg.agent_dev = device;
  return {};
}

bool staging_on_agent(const Staging &stg) { return stg.on_agent; }

Status staging_agent_copy_out(Staging &stg) {
  for (int i = 0; i < stg.nout; ++i) {
    const Staging::Copy &c = stg.out[i];
    MPIX_TRY(stg.be->agent_copy(stg.agent_dev, c.bounce, c.user, c.bytes, &stg.agent_ticket));
  }
  return {};
}

Status staging_agent_copy_in(Staging &stg, std::size_t received, bool *issued) {
  *issued = false;
  if (!stg.has_in || stg.copied_in.exchange(true) || stg.delivered) return {};
  const Staging::Copy &c = stg.in;
  const std::size_t n = received < c.bytes ? received : c.bytes;
  // Pieces of a chunked message copied in as they arrived: wait for those copies too.
  *issued = stg.agent_in > 0;
  if (n <= stg.agent_in) return {};
  MPIX_TRY(stg.be->agent_copy(stg.agent_dev, c.user + stg.agent_in, c.bounce + stg.agent_in,
                              n - stg.agent_in, &stg.agent_ticket));
  *issued = true;
  return {};
}

bool staging_agent_copied(const Staging &stg) {
  return stg.be->agent_copy_done(stg.agent_dev, stg.agent_ticket);
}

void *staging_direct_target(Staging &stg) {
  // The stream's copy in must read the length at run time (clip), or be the agent's; a
  // pipelined (chunked) receive copies piece by piece and is left alone.
  if (!stg.has_in || !stg.short_ok || stg.in.runs || stg.pipelined || stg.recv_chunk)
    return nullptr;
  if (!stg.on_agent && !stg.clip) return nullptr;
  stg.delivered = true;
  return stg.in.user;
}

StagingPoolStats staging_pool_stats() { return pool().stats(); }

}  // namespace mpix
