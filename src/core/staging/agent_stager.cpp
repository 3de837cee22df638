#include "core/staging/agent_stager.hpp"

#include <cstdint>

#include "base/log.hpp"
#include "gpu/backend.hpp"

namespace mpix {

Status AgentStager::on_fire(bool *copying) {
  *copying = b_.nout > 0;
  for (int i = 0; i < b_.nout; ++i) {
    const StagedCopy &c = b_.out[i];
    MPIX_TRY(b_.be->agent_copy(dev_, c.bounce, c.user, c.bytes, &ticket_));
  }
  return {};
}

bool AgentStager::copy_done() { return b_.be->agent_copy_done(dev_, ticket_); }

void AgentStager::on_piece(uint64_t len, uint64_t n) {
  if (!recv_chunk_ || !b_.has_in) return;
  // Each piece as it arrives, overlapping the later pieces' transfer; on_complete copies what
  // is left.
  const StagedCopy &c = b_.in;
  uint64_t upto = n * recv_chunk_;
  if (upto > len) upto = len;
  if (upto > c.bytes) upto = c.bytes;
  if (upto <= copied_) return;
  Status st = b_.be->agent_copy(dev_, c.user + copied_, c.bounce + copied_,
                                static_cast<std::size_t>(upto) - copied_, &ticket_);
  if (st.is_ok()) copied_ = static_cast<std::size_t>(upto);
  else MPIX_LOG(warn, "stream", "copying a piece in (left for the end): %s", st.what().c_str());
}

Status AgentStager::on_complete(const MPI_Status &st, bool *copying) {
  *copying = false;
  if (!b_.has_in || delivered_ || st.MPI_ERROR != MPI_SUCCESS) return {};
  // A reduction's result fills its buffer; a receive's message may be shorter than it.
  std::size_t n = b_.in.bytes;
  if (b_.short_ok) {
    const uint64_t got = received_bytes(st);
    if (got == 0) return {};
    if (got < n) n = static_cast<std::size_t>(got);
  }
  // Pieces copied in as they arrived: wait for those copies too.
  *copying = copied_ > 0;
  if (n <= copied_) return {};
  const StagedCopy &c = b_.in;
  MPIX_TRY(b_.be->agent_copy(dev_, c.user + copied_, c.bounce + copied_, n - copied_, &ticket_));
  *copying = true;
  return {};
}

void *AgentStager::direct_target() {
  // A chunked message's pieces are copied in as they arrive: left alone.
  if (!b_.short_ok || b_.in.runs || recv_chunk_) return nullptr;
  delivered_ = true;
  return b_.in.user;
}

}  // namespace mpix
