#include "core/staging/stream_stager.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/staging/staging_settings.hpp"
#include "gpu/backend.hpp"

namespace mpix {

Status StreamStager::before_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t first) {
  (void)trigger_word;
  (void)first;
  for (int i = 0; i < b_.nout; ++i) MPIX_TRY(copy_to_bounce(ex, b_.out[i]));
  // A receive not clipped at its length: the bytes past the message go back unchanged. A dense
  // one has the agent copy only those, once it knows them (keep_tail): copying the whole
  // receive buffer out before every receive cost a large one's stream a device-to-host copy of
  // its size, for the rare shorter message.
  if (b_.short_ok && !clip_ && !keeps_tail()) MPIX_TRY(copy_to_bounce(ex, b_.in));
  return {};
}

Status StreamStager::keep_tail(const MPI_Status &st) {
  if (!keeps_tail() || tail_kept_) return {};
  tail_kept_ = true;
  const int err = st.MPI_ERROR;
  uint64_t n = err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE ? received_bytes(st) : 0;
  const StagedCopy &c = b_.in;
  if (n >= c.bytes) return {};
  return b_.be->copy_sync(c.bounce + n, c.user + n, static_cast<std::size_t>(c.bytes - n));
}

Status StreamStager::on_complete(const MPI_Status &st, bool *copying) {
  *copying = false;
  return keep_tail(st);
}

Status StreamStager::after_wait(ExecStream &ex, const uint64_t *trigger_word,
                                uint64_t next_threshold) {
  if (!claim_copy_in()) return {};
  const StagedCopy &c = b_.in;
  if (clip_) MPIX_TRY(ex.copy_prefix_async(c.user, c.bounce, c.bytes, b_.len_word, 0, direct_));
  else MPIX_TRY(copy_to_user(ex, c));
  b_.release_word = trigger_word;
  b_.release_value = next_threshold;
  return {};
}

bool StreamStager::fuses_copy_out(ExecStream &ex) const {
  if (b_.nout != 1 || (b_.short_ok && !clip_)) return false;
  const StagedCopy &c = b_.out[0];
  return !c.runs && ex.can_fuse_staged(c.bytes, c.user_device);
}

Status StreamStager::copy_out_and_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t value) {
  const StagedCopy &c = b_.out[0];
  return ex.fused_copy_then_write(c.bounce, c.user, c.bytes, trigger_word, value);
}

bool StreamStager::copy_out_piece(CopyPiece *piece) const {
  if (b_.nout != 1 || b_.out[0].runs) return false;
  const StagedCopy &c = b_.out[0];
  *piece = CopyPiece{reinterpret_cast<uint64_t>(c.bounce), reinterpret_cast<uint64_t>(c.user),
                     c.bytes, 0};
  return true;
}

std::size_t StreamStager::fused_copy_in_max() {
  static const std::size_t most =
      static_cast<std::size_t>(setting_long(StagingSetting::staging_fuse_in_max));
  return most;
}

bool StreamStager::fuses_copy_in(ExecStream &ex) const {
  const StagedCopy &c = b_.in;
  return clip_ && b_.has_in && c.bytes <= fused_copy_in_max() && b_.len_word &&
         ex.can_fuse_staged(c.bytes, c.user_device) && ex.can_copy_prefix_staged(c.user_device);
}

Status StreamStager::wait_and_copy_in(ExecStream &ex, const uint64_t *done_word,
                                      uint64_t done_value, const uint64_t *trigger_word,
                                      uint64_t next_threshold, const StreamMemOp *then,
                                      std::size_t nthen, const PreWork *pre) {
  // One receive of the group form: not claimed (a host MPI_Wait that came first copied already),
  // the stream only waits.
  FusedReceive part{done_word, done_value, nullptr, nullptr, 0, nullptr, 0};
  const bool claimed = claim_fused_receive(&part);
  MPIX_TRY(ex.wait_then_copy_prefix_each(&part, 1, then, nthen, pre));
  if (claimed) copy_in_enqueued(trigger_word, next_threshold);
  return {};
}

bool StreamStager::fuses_many(ExecStream &ex) const {
  return fuses_copy_in(ex) && ex.fuses_many(b_.in.bytes);
}

bool StreamStager::claim_fused_receive(FusedReceive *part) {
  // Claimed like after_wait's copy.
  if (!claim_copy_in()) return false;
  const StagedCopy &c = b_.in;
  part->dst = c.user;
  part->src = c.bounce;
  part->max_bytes = c.bytes;
  part->len_word = b_.len_word;
  part->tiny_flag = tiny_copy_in() ? b_.tiny_flag : 0;
  return true;
}

void StreamStager::copy_in_enqueued(const uint64_t *trigger_word, uint64_t next_threshold) {
  // As wait_and_copy_in after its kernel: the bounce buffer goes back once the stream has
  // passed the copy.
  b_.release_word = trigger_word;
  b_.release_value = next_threshold;
}

void StreamStager::on_done(const MPI_Status &st) {
  // An op that failed before the network finished it (never posted) has not kept its tail.
  if (keeps_tail() && !tail_kept_) {
    Status ts = keep_tail(st);
    if (!ts.is_ok())
      MPIX_LOG(error, "staging", "a failed receive's buffer may be overwritten: %s",
               ts.what().c_str());
  }
  if (!b_.len_word) return;
  // Already in place (direct_target): the stream's copy in copies nothing. A message to copy
  // from elsewhere (deliver_from) has its length and source stored already.
  if (from_peer_) return;
  // A reduction's result fills its buffer: the length staging stored stays.
  if (!b_.short_ok) return;
  store_signal(b_.len_word, delivered_ ? 0 : received_bytes(st));
  // A message longer than a short bounce buffer went into the whole one (receive_space).
  if (b_.in_whole && !delivered_)
    store_signal(b_.len_word + 1, reinterpret_cast<uint64_t>(b_.in_whole));
  // Every piece wait of a pipelined copy in passes now (pieces past the message copy nothing).
  store_signal(b_.piece_word, uint64_t{1} << 62);
}

bool StreamStager::tiny_copy_in() const {
  const StagedCopy &c = b_.in;
  return clip_ && b_.has_in && !c.runs && c.bytes <= TinyWords::kBytes && b_.len_word &&
         b_.tiny_flag != 0;
}

void StreamStager::on_release() {
  // Only a receive copied in by its length from its own bounce buffer: a message delivered or
  // to be taken from the sender leaves the words unflagged (the kernel reads the length words).
  // Written whether or not a copy in polls them: one queued after the receive completed would
  // otherwise find the completion word reached and the words unwritten, and take two more
  // round trips than with them (only the agent's stores are spared by knowing; a copy in
  // another way — hostfn mode, a host wait — leaves them unread).
  if (!tiny_copy_in() || delivered_ || from_peer_) return;
  const StagedCopy &c = b_.in;
  // The length on_done stored (this thread wrote it last).
  const uint64_t got = load_signal(b_.len_word);
  const std::size_t n = got < c.bytes ? static_cast<std::size_t>(got) : c.bytes;
  uint32_t payload[TinyWords::kBytes / 4 + 1] = {};
  std::memcpy(payload, c.bounce, n);
  uint64_t *w = b_.tiny_words();
  const uint32_t flag = b_.tiny_flag;
  const std::size_t words = TinyWords::words(c.bytes);
  for (std::size_t i = 1; i < words; ++i)
    store_signal(w + i, TinyWords::word(flag, payload[i - 1]));
  store_signal(w, TinyWords::word(flag, static_cast<uint32_t>(n)));
}

void *StreamStager::direct_target() {
  // Only a copy in that reads the length at run time copies nothing over a delivered message.
  if (!clip_) return nullptr;
  delivered_ = true;
  return b_.in.user;
}

bool StreamStager::deliver_from(const void *from, uint64_t bytes, const uint64_t **copied,
                                const uint64_t *gate, uint64_t gate_value, const uint64_t *done,
                                uint64_t done_value) {
  if (!direct_ || !from || delivered_) return false;
  store_signal(b_.len_word, bytes);
  // Stored before the receive completes: the copy in reads these words once its completion
  // word is written.
  store_signal(b_.len_word + 4, reinterpret_cast<uint64_t>(gate));
  store_signal(b_.len_word + 5, gate_value);
  store_signal(b_.len_word + 6, reinterpret_cast<uint64_t>(done));
  store_signal(b_.len_word + 7, done_value);
  store_signal(b_.len_word + 1, reinterpret_cast<uint64_t>(from));
  from_peer_ = true;
  *copied = b_.copied_word;
  return true;
}

Status StreamStager::wait_gate() const {
  const auto *gate = reinterpret_cast<const uint64_t *>(load_signal(b_.len_word + 4));
  if (!gate) return {};
  const uint64_t value = load_signal(b_.len_word + 5);
  // Device memory of the sender's, mapped here: read with small copies (a rare path: a host
  // wait on a receive its stream was to copy).
  for (unsigned spins = 0;; ++spins) {
    uint64_t now = 0;
    MPIX_TRY(b_.be->copy_sync(&now, gate, sizeof now));
    if (reached(now, value)) return {};
    if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Status StreamStager::receive_space(uint64_t bytes, void **at) {
  if (!b_.has_in || bytes <= b_.in_cap) return {};
  char *view = nullptr;
  MPIX_TRY(b_.grow_in(&view));
  *at = view;
  return {};
}

Status StreamStager::on_host_wait() {
  if (!claim_copy_in() || delivered_) return {};
  const StagedCopy &c = b_.in;
  if (clip_) {
    const uint64_t n = load_signal(b_.len_word);
    const uint64_t from = load_signal(b_.len_word + 1);
    if (from) MPIX_TRY(wait_gate());
    Status st = b_.be->copy_sync(c.user, from ? reinterpret_cast<const char *>(from) : c.bounce,
                                 n < c.bytes ? static_cast<std::size_t>(n) : c.bytes);
    if (direct_) store_signal(b_.copied_word, 1);  // copied (or failed: the sender goes on)
    return st;
  }
  return c.runs ? b_.be->copy_runs_sync(c.user, c.bounce, c.runs, c.nruns)
                : b_.be->copy_sync(c.user, c.bounce, c.bytes);
}

}  // namespace mpix
