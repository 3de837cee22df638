// The agent thread copies (MPIX_AGENT_COPY_MAX, core/stager.hpp), on the backend's side stream
// (Backend::agent_copy): out of device memory when the stream reaches the op (the stream has
// run everything before it), into device memory once the message has arrived and before the
// completion word is written (so the stream's wait releases with the data in place), and only
// the bytes that arrived; a chunked message's pieces as they arrive. The user's stream then
// carries no copy at all: each copy engine operation in a stream's chain costs several
// microseconds of stream time (docs/results-gpu.md), a host-issued one about a third of that.
// Dense copies only.
#pragma once

#include <cstddef>
#include <utility>

#include "core/stager.hpp"
#include "core/staging/staged_buffers.hpp"

namespace mpix {

class AgentStager final : public Stager {
 public:
  // @p device: the stream's (-1 for a host stream). @p recv_chunk: a receive that may get a
  // chunked message in pieces of this many bytes (0: none).
  AgentStager(StagedBuffers &&b, int device, std::size_t recv_chunk)
      : b_(std::move(b)), dev_(device), recv_chunk_(recv_chunk) {}
  Status before_trigger(ExecStream &, uint64_t *, uint64_t) override { return {}; }
  Status after_wait(ExecStream &, const uint64_t *, uint64_t) override { return {}; }
  Status on_fire(bool *copying) override;
  bool copy_done() override;
  void on_piece(uint64_t len, uint64_t n) override;
  Status on_complete(const MPI_Status &st, bool *copying) override;
  void *direct_target() override;
  // (on_host_wait has nothing left to copy: the agent copied in before it completed the op.)

 private:
  StagedBuffers b_;
  const int dev_;
  const std::size_t recv_chunk_;
  uint64_t ticket_ = 0;     // the agent's last copy for this op
  std::size_t copied_ = 0;  // bytes of a chunked receive copied in so far
  bool delivered_ = false;  // the message went straight into the user's buffer
};

}  // namespace mpix
