// Provider ofi's state of one point-to-point op (Op::prov points here from arm() until the op
// completes). Its OfiCtx is the libfabric operation context: for a native op it also carries
// the trigger (counter + threshold), and completions hand it back to find the op.
#pragma once

#include <rdma/fi_trigger.h>

#include <chrono>
#include <list>
#include <memory>
#include <vector>

#include "base/status.hpp"
#include "core/op.hpp"
#include "providers/ofi/soft_match.hpp"
#include "providers/ofi/trigger_counter.hpp"

namespace mpix {

struct OfiOp;

// Standard-layout, so the pointer libfabric returns converts back without guessing. An op's
// context has self set; a soft-matching header receive (soft_match.hpp) has self == nullptr and
// its slot number.
struct OfiCtx {
  fi_triggered_context2 fi;  // first: libfabric reads the trigger from the context's start
  OfiOp *self;
  std::size_t slot;
};
static_assert(sizeof(fi_triggered_context2) == sizeof(fi_context2),
              "a triggered context must be usable as an operation context");

// Where a soft-matched op (soft_match.hpp) stands.
enum class SoftStage : uint8_t {
  none,        // not soft-matched
  header,      // send: its header (eager: with the data) is still to be posted
  wait_match,  // receive: in the posted queue, no header matched yet
  wait_cts,    // send (rendezvous): header sent, waiting for the receiver's clear-to-send
  payload,     // rendezvous: the payload send / receive is still to be posted
  posted,      // libfabric holds the op's last operation; its completion completes the op
};

struct OfiOp {
  OfiCtx ctx{};
  Op *op = nullptr;
  bool is_send = false;
  bool native = false;     // posted at arm() as a triggered op
  bool bump_prev = false;  // native: first op of a chained counter (trigger_counter.hpp)
  bool listed = false;     // in the provider's in-flight list (inflight_pos is valid)
  bool large = false;      // listed, and counted in the provider's large_inflight_
  SoftStage stage = SoftStage::none;
  bool cts_pending = false;      // soft receive: payload posted, clear-to-send not yet sent
  bool packed = false;           // non-contiguous datatype: the data goes through `bounce`
  bool timed_out = false;        // reported failed; waiting for libfabric to give the context back
  int fail_class = MPI_SUCCESS;  // an error found after posting (reported at completion)
  void *buf = nullptr;           // what libfabric reads or writes
  std::size_t len = 0;
  std::vector<char> bounce;
  fi_addr_t addr = FI_ADDR_UNSPEC;
  uint64_t tag = 0, ignore = 0;
  std::shared_ptr<TriggerCounter> cntr;  // native: the counter that fires it
  // Soft matching: the header (+ eager data) as sent; the rendezvous id; what matched.
  std::vector<char> wire;
  uint32_t rndv_id = 0;
  uint64_t match = 0;                     // soft receive: the matched header's ctx | source | tag
  fi_addr_t reply_addr = FI_ADDR_UNSPEC;  // soft receive: where its clear-to-send goes
  // Soft receive of a rendezvous longer than its buffer: the payload lands whole in `overflow`
  // (shm hangs on a truncated large receive) and its first trunc_cap bytes go to trunc_buf.
  std::vector<char> overflow;
  void *trunc_buf = nullptr;
  std::size_t trunc_cap = 0;
  std::chrono::steady_clock::time_point posted_at{};
  std::list<OfiOp *>::iterator inflight_pos;  // agent: place in the in-flight list

  OfiOp() { ctx.self = this; }
  OfiOp(const OfiOp &) = delete;
  OfiOp &operator=(const OfiOp &) = delete;
};

// How a (buffer, count, datatype) goes to libfabric: in place (*contiguous: the typemap is one
// ascending gap-free run, starting at *start; typemap_order.hpp) or packed; *bytes is the data
// size either way.
Status buffer_layout(const void *buf, int count, MPI_Datatype dt, bool *contiguous, void **start,
                     std::size_t *bytes);
// Packs the op's send data into o.bounce (stream order: the agent calls it when the stream
// reached the op).
Status pack_send(OfiOp &o);
// Unpacks @p received bytes of o.bounce into the op's receive buffer.
Status unpack_recv(OfiOp &o, std::size_t received);

}  // namespace mpix
