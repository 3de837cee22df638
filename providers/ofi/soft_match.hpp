// MPI matching done by mpix ("soft matching"), for libfabric providers whose own tag matching
// cannot be trusted with messages that arrived before their receive.
//
// Why: libfabric 1.17's shm (its shared receive context, util_srx) compares a newly posted
// tagged receive with the queued unexpected messages using the *queued entry's* ignore mask
// instead of the receive's. That entry's mask is 0 on a fresh entry, so a receive with ignore
// bits (MPI_ANY_SOURCE / MPI_ANY_TAG in our tag layout) never matches a message that is already
// there and waits forever; and it is stale on a recycled entry (left by an earlier wildcard
// receive), so an exact receive can take a message with another tag. The start-up self-test
// (self_test.cpp) detects the first symptom; then the provider matches messages itself:
//
//   * Every message starts with a SoftHeader sent as an untagged message (FI_MSG), which
//     libfabric matches in arrival order by address only: no tag comparison is involved.
//     Messages up to kSoftEagerMax bytes travel inside it (eager).
//   * Larger ones are a rendezvous: the header (kind rts) announces them; when mpix has matched
//     it to a receive, the receiver posts an exact tagged receive for the payload and only then
//     sends a clear-to-send (kind cts); the sender then sends the payload. So a payload never
//     arrives before its receive, and libfabric's unexpected-message queue is never used for
//     tagged messages.
//   * The receiver keeps kSoftSlots untagged receives posted for headers and reads them in the
//     order they were posted (which is the order messages filled them), so the arrival order of
//     one sender's messages is kept even where completions are reported out of order.
//
// SoftQueues below is MPI's matching proper: posted receives in posting order, unexpected
// headers in arrival order, each new arrival taking the first match of the other queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <vector>

#include "providers/ofi/tag_layout.hpp"

namespace mpix {

struct OfiOp;

enum class SoftKind : uint32_t { eager = 1, rts = 2, cts = 3 };

// Sent as raw bytes between processes of one build (same layout on both sides).
struct SoftHeader {
  uint64_t match;  // ctx | source | tag of the message (tag_layout.hpp)
  uint64_t size;   // message bytes
  uint32_t id;     // rendezvous id, chosen by the sender (rts, cts)
  SoftKind kind;
};
static_assert(sizeof(SoftHeader) == 24, "the soft-matching header is sent as 24 raw bytes");

constexpr std::size_t kSoftEagerMax = 8192;  // payload bytes carried inside the header message
constexpr std::size_t kSoftSlots = 64;       // header receives kept posted

// libfabric's tag rule: equal except where the receive ignores bits.
constexpr bool soft_matches(uint64_t recv_tag, uint64_t ignore, uint64_t msg) {
  return (recv_tag | ignore) == (msg | ignore);
}

// The libfabric tag of a rendezvous payload: the internal bit, the sender's context id and
// rank (from the header's match), and the sender's rendezvous id in the tag field. Unique at
// the receiver while in flight; application tags never set the internal bit.
constexpr uint64_t soft_payload_tag(uint64_t match, uint32_t id) {
  return ofi_tag::kInternal | (match & (ofi_tag::kCtxMask | ofi_tag::kSrcMask)) |
         (uint64_t{id} & ofi_tag::kTagMask);
}

class SoftQueues {
 public:
  struct Unexpected {
    SoftHeader hdr;
    std::vector<char> data;  // eager payload
  };

  // A receive reached by its stream: the first unexpected message it matches is moved to
  // *out (true); otherwise the receive waits in the posted queue (false).
  bool post(OfiOp *o, Unexpected *out);
  // A header arrived: the first posted receive it matches (removed from the queue), or
  // nullptr after the message was queued as unexpected (eager data copied).
  OfiOp *arrive(const SoftHeader &h, const char *data, std::size_t len);
  // Takes a receive out of the posted queue (timeout); false if it was not there.
  bool remove(OfiOp *o);
  bool has_posted() const { return !posted_.empty(); }
  const std::list<OfiOp *> &posted() const { return posted_; }

 private:
  std::list<OfiOp *> posted_;
  std::list<Unexpected> unexpected_;
};

}  // namespace mpix
