// The stream copies piece by piece (MPIX_STAGING_CHUNK, core/stager.hpp), so that the copy of
// one piece overlaps the transfer of another (providers/mpi/mpi_chunk.hpp has the protocol):
//   a chunked send: the stream copies piece i out and then writes trigger threshold
//     op.threshold + i, so the provider sends piece i while the stream copies piece i + 1;
//   a receive that may get a chunked message: before its completion wait, the stream waits for
//     each piece to arrive (the provider says so through op_pieces_arrived) and copies it in,
//     clipped at the message's length, while the later pieces are on the wire.
#pragma once

#include <cstddef>
#include <utility>

#include "core/staging/stream_stager.hpp"

namespace mpix {

class PipelinedStager final : public StreamStager {
 public:
  // @p chunk: bytes per piece. A receive is copied in by its length (clip).
  PipelinedStager(StagedBuffers &&b, std::size_t chunk);
  uint64_t pieces() const override { return pieces_; }
  Status before_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t first) override;
  bool copies_before_wait() const override { return b_.has_in; }
  Status before_wait(ExecStream &ex) override;
  Status after_wait(ExecStream &ex, const uint64_t *trigger_word, uint64_t next_threshold) override;
  void on_piece(uint64_t len, uint64_t n) override;
  // Piece by piece, each copy with its own trigger or piece wait: nothing to fuse.
  bool fuses_copy_out(ExecStream &) const override { return false; }
  bool fuses_copy_in(ExecStream &) const override { return false; }
  // Pieces are copied in as they arrive: a message delivered elsewhere would be overwritten.
  void *direct_target() override { return nullptr; }

 private:
  const std::size_t chunk_;
  const uint64_t pieces_;  // of a send (1 for a receive)
};

}  // namespace mpix
