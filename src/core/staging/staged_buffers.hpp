// A staged op's bounce buffers and the copies between them and the user's buffers: what every
// stager (core/stager.hpp) works on.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "base/copy_run.hpp"
#include "base/status.hpp"
#include "core/staging/bounce_pool.hpp"
#include "gpu/backend.hpp"

namespace mpix {

class ExecStream;

// The span of a (buffer, count, datatype) from its true lower bound, in the user's buffer and
// in the bounce buffer (same layout). A datatype with gaps copies only its typemap's blocks,
// `runs`, a table kept in the bounce buffer after the span: pinned, so that a GPU kernel may
// read it, and released with the buffer, once no copy can use it any more.
struct StagedCopy {
  char *user = nullptr;
  char *bounce = nullptr;
  std::size_t bytes = 0;
  const CopyRun *runs = nullptr;  // null: the span is dense, one copy
  std::size_t nruns = 0;
  // Whose memory user is (Backend::classify_at, asked once by staging_setup): a device, or
  // kAnyDevice (managed memory; host memory a host stream stages).
  int user_device = kAnyDevice;
};

struct StagedBuffers {
  explicit StagedBuffers(Backend *b) : be(b) {}
  StagedBuffers(StagedBuffers &&o) noexcept;
  StagedBuffers(const StagedBuffers &) = delete;
  StagedBuffers &operator=(const StagedBuffers &) = delete;
  // The buffers go back to the pool, reusable once the stream passed release_word's value.
  ~StagedBuffers();

  // A bounce buffer for the region of @p user (@p count of @p dt); *@p bounce_view: its
  // counterpart of @p user (the base the provider addresses). @p lengths: also the words
  // len_word (two), piece_word and copied_word, after the span (and table). @p short_max (with
  // @p lengths, a dense span longer than it): the bounce buffer holds only its first
  // @p short_max bytes (in_cap); grow_in() gives a whole one when a longer message comes.
  Status stage(char *user, int count, MPI_Datatype dt, StagedCopy *c, char **bounce_view,
               bool lengths, std::size_t short_max = 0);
  // A whole bounce buffer for the receive's span beside the short one (once); *@p view: its
  // counterpart of the user's buffer. The copy in reads it once len_word[1] points there.
  Status grow_in(char **view);
  // A receive's (nothing else staged) short bounce buffer replaced by a whole one, before the
  // op is armed; *@p view as stage's.
  Status restage_in_whole(int count, MPI_Datatype dt, char **view);

  Backend *be;
  Bounce bufs[2];
  int nbufs = 0;
  StagedCopy out[2];  // user -> bounce
  int nout = 0;
  StagedCopy in;  // bounce -> user
  bool has_in = false;
  // A receive (not an allreduce, whose result fills its buffer): the message may be shorter.
  bool short_ok = false;
  // A receive's words after the span (pinned; ExecStream::copy_prefix_async): len_word[0] the
  // received bytes, len_word[1] where the copy in reads them from (0: the bounce buffer; else a
  // GPU-direct message's device address, Stager::deliver_from).
  uint64_t *len_word = nullptr;
  uint64_t *piece_word = nullptr;   // pieces of a chunked message in the bounce buffer
  uint64_t *copied_word = nullptr;  // len_word[3]: set by the copy in of a delivered message
  // len_word[4], [5]: where a delivered message's gate is and the value it waits for (0: none).
  // len_word[6], [7]: the sender's done word (mapped here) and the value the copy in writes there
  // once it has copied the message (0: none; Op::peer_done).
  static constexpr std::size_t kLenWords = 8;
  static_assert(TinyWords::kAt == kLenWords, "a tiny receive's words follow the length words");
  // len_word[kLenWords ...]: a tiny receive's flagged words (TinyWords), flagged with tiny_flag;
  // null where the receive is not tiny (no room was made for them).
  uint64_t *tiny_words() const { return tiny_flag ? len_word + kLenWords : nullptr; }
  const uint64_t *release_word = nullptr;  // the stream's trigger word, once a copy in is queued
  uint64_t release_value = 0;
  int bounce_device = -1;     // -1: bounce buffers in pinned host memory; else on that device
  std::size_t in_cap = 0;     // bytes of the receive's span its bounce buffer holds
  std::ptrdiff_t in_off = 0;  // the receive's true lower bound (view = bounce - in_off)
  char *in_whole = nullptr;   // grow_in's buffer, or null
  uint32_t tiny_flag = 0;     // a tiny receive's own flag (TinyWords); 0: not a tiny receive
};

// Stream-ordered copies of @p c, along its runs if it has gaps.
Status copy_to_bounce(ExecStream &ex, const StagedCopy &c);
Status copy_to_user(ExecStream &ex, const StagedCopy &c);
// Bytes the message of @p st has (0 if MPI cannot tell).
uint64_t received_bytes(const MPI_Status &st);

}  // namespace mpix
