#include "core/staging/pipelined_stager.hpp"

#include "base/waiter.hpp"
#include "gpu/backend.hpp"

namespace mpix {

PipelinedStager::PipelinedStager(StagedBuffers &&b, std::size_t chunk)
    : StreamStager(std::move(b), /*clip=*/true),
      chunk_(chunk),
      pieces_(b_.nout ? (b_.out[0].bytes + chunk - 1) / chunk : 1) {}

Status PipelinedStager::before_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t first) {
  if (!b_.nout) return {};          // a receive: copied in by length, nothing to fill
  const StagedCopy &c = b_.out[0];  // a send of a predefined datatype: dense
  for (uint64_t i = 0; i < pieces_; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * chunk_;
    const std::size_t n = c.bytes - at < chunk_ ? c.bytes - at : chunk_;
    MPIX_TRY(ex.copy_async(c.bounce + at, c.user + at, n));
    if (i + 1 < pieces_) MPIX_TRY(ex.write_value(trigger_word, first + i));
  }
  return {};
}

Status PipelinedStager::before_wait(ExecStream &ex) {
  if (!b_.has_in) return {};
  const StagedCopy &c = b_.in;
  for (std::size_t at = 0, i = 0; at < c.bytes; at += chunk_, ++i) {
    MPIX_TRY(ex.wait_value(b_.piece_word, i + 1));
    MPIX_TRY(ex.copy_prefix_async(c.user + at, c.bounce + at,
                                  c.bytes - at < chunk_ ? c.bytes - at : chunk_, b_.len_word, at));
  }
  return {};
}

Status PipelinedStager::after_wait(ExecStream &ex, const uint64_t *trigger_word,
                                   uint64_t next_threshold) {
  (void)ex;
  // Copied in before the wait (before_wait); the claim keeps a host wait from copying again.
  if (!claim_copy_in()) return {};
  b_.release_word = trigger_word;
  b_.release_value = next_threshold;
  return {};
}

void PipelinedStager::on_piece(uint64_t len, uint64_t n) {
  if (!b_.has_in) return;
  store_signal(b_.len_word, len);  // before the pieces it covers are released
  store_signal(b_.piece_word, n);
}

}  // namespace mpix
