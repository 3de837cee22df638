#include "core/staging/staged_buffers.hpp"

#include <atomic>
#include <cstring>

#include "base/waiter.hpp"
#include "core/typemap.hpp"
#include "gpu/backend.hpp"

namespace mpix {
namespace {

// Tiny receives' flags, process-wide: consecutive ones differ (a buffer's former receive had
// another), and it takes 2^32 - 1 receives to come back to one; never 0.
uint32_t next_tiny_flag() {
  static std::atomic<uint32_t> counter{0};
  uint32_t f = counter.fetch_add(1, std::memory_order_relaxed) + 1;
  return f ? f : counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

StagedBuffers::StagedBuffers(StagedBuffers &&o) noexcept
    : be(o.be),
      nbufs(o.nbufs),
      nout(o.nout),
      in(o.in),
      has_in(o.has_in),
      short_ok(o.short_ok),
      len_word(o.len_word),
      piece_word(o.piece_word),
      copied_word(o.copied_word),
      release_word(o.release_word),
      release_value(o.release_value),
      bounce_device(o.bounce_device),
      in_cap(o.in_cap),
      in_off(o.in_off),
      in_whole(o.in_whole),
      tiny_flag(o.tiny_flag) {
  for (int i = 0; i < 2; ++i) {
    bufs[i] = o.bufs[i];
    out[i] = o.out[i];
  }
  o.nbufs = 0;  // the buffers are ours now
}

StagedBuffers::~StagedBuffers() {
  for (int i = 0; i < nbufs; ++i) bounce_release(bufs[i], release_word, release_value);
}

Status StagedBuffers::stage(char *user, int count, MPI_Datatype dt, StagedCopy *c,
                            char **bounce_view, bool lengths, std::size_t short_max) {
  TypeLayout lay;
  MPIX_TRY(typemap_layout(count, dt, &lay));
  const std::ptrdiff_t off = lay.lb;
  const bool shortened = lengths && short_max > 0 && lay.dense() && lay.span > short_max;
  const std::size_t held = shortened ? short_max : lay.span;
  const std::size_t table_at = (held + alignof(CopyRun) - 1) / alignof(CopyRun) * alignof(CopyRun);
  const std::size_t end = lay.dense() ? table_at : table_at + lay.runs.size() * sizeof(CopyRun);
  // A tiny receive (TinyWords) has its flagged words after the length words.
  const bool tiny = lengths && lay.dense() && lay.span <= TinyWords::kBytes;
  const std::size_t words = kLenWords + (tiny ? TinyWords::words(lay.span) : 0);
  const std::size_t bytes = lengths ? end + words * sizeof(uint64_t) : lay.dense() ? lay.span : end;
  Bounce b;
  MPIX_TRY(bounce_acquire(be, bytes, &b, bounce_device));
  if (lengths) {
    len_word = reinterpret_cast<uint64_t *>(b.p + end);
    store_signal(len_word, lay.span);  // all of it, unless the agent says otherwise
    store_signal(len_word + 1, 0);     // from the bounce buffer
    piece_word = len_word + 2;
    store_signal(piece_word, 0);
    copied_word = len_word + 3;
    store_signal(copied_word, 0);
    store_signal(len_word + 4, 0);  // no gate (Stager::deliver_from)
    store_signal(len_word + 5, 0);
    store_signal(len_word + 6, 0);  // no sender's done word (Stager::deliver_from)
    store_signal(len_word + 7, 0);
    // A flag of its own: the words a former use of the buffer left carry another.
    tiny_flag = tiny ? next_tiny_flag() : 0;
  }
  bufs[nbufs++] = b;
  c->user = user + off;
  c->bounce = b.p;
  c->bytes = lay.span;
  if (lengths) {
    in_cap = held;
    in_off = off;
  }
  if (!lay.dense()) {
    std::memcpy(b.p + table_at, lay.runs.data(), lay.runs.size() * sizeof(CopyRun));
    c->runs = reinterpret_cast<const CopyRun *>(b.p + table_at);
    c->nruns = lay.runs.size();
  }
  // The provider addresses the buffer as the user did: base = bounce - true lower bound.
  *bounce_view = b.p - off;
  return {};
}

Status StagedBuffers::grow_in(char **view) {
  if (!in_whole) {
    Bounce b;
    MPIX_TRY(bounce_acquire(be, in.bytes, &b));
    bufs[nbufs++] = b;
    in_whole = b.p;
  }
  *view = in_whole - in_off;
  return {};
}

Status StagedBuffers::restage_in_whole(int count, MPI_Datatype dt, char **view) {
  for (int i = 0; i < nbufs; ++i) bounce_release(bufs[i], nullptr, 0);
  nbufs = 0;
  char *user = in.user - in_off;
  const int device = in.user_device;
  in = StagedCopy{};
  in.user_device = device;
  len_word = piece_word = copied_word = nullptr;
  return stage(user, count, dt, &in, view, true);
}

Status copy_to_bounce(ExecStream &ex, const StagedCopy &c) {
  return c.runs ? ex.copy_runs_async(c.bounce, c.user, c.runs, c.nruns)
                : ex.copy_async(c.bounce, c.user, c.bytes);
}

Status copy_to_user(ExecStream &ex, const StagedCopy &c) {
  return c.runs ? ex.copy_runs_async(c.user, c.bounce, c.runs, c.nruns)
                : ex.copy_async(c.user, c.bounce, c.bytes);
}

uint64_t received_bytes(const MPI_Status &st) {
  MPI_Count n = 0;
  MPI_Status copy = st;  // MPI_Get_elements_x takes a non-const status in MPI-3 bindings
  if (MPI_Get_elements_x(&copy, MPI_BYTE, &n) != MPI_SUCCESS || n < 0) n = 0;
  return static_cast<uint64_t>(n);
}

}  // namespace mpix
