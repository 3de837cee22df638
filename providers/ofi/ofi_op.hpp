// Provider ofi's state of one point-to-point op (Op::prov points here from arm() until the op
// completes). Its OfiCtx is the libfabric operation context: for a native op it also carries
// the trigger (counter + threshold), and completions hand it back to find the op.
#pragma once

#include <rdma/fi_trigger.h>

#include <chrono>
#include <list>
#include <memory>
#include <vector>

#include "core/op.hpp"
#include "core/status.hpp"
#include "providers/ofi/trigger_counter.hpp"

namespace mpix {

struct OfiOp;

// Standard-layout, so the pointer libfabric returns converts back without guessing.
struct OfiCtx {
  fi_triggered_context2 fi;  // first: libfabric reads the trigger from the context's start
  OfiOp *self;
};
static_assert(sizeof(fi_triggered_context2) == sizeof(fi_context2),
              "a triggered context must be usable as an operation context");

struct OfiOp {
  OfiCtx ctx{};
  Op *op = nullptr;
  bool is_send = false;
  bool native = false;   // posted at arm() as a triggered op
  bool packed = false;   // non-contiguous datatype: the data goes through `bounce`
  bool timed_out = false;  // reported failed; waiting for libfabric to give the context back
  int fail_class = MPI_SUCCESS;  // an error found after posting (reported at completion)
  void *buf = nullptr;   // what libfabric reads or writes
  std::size_t len = 0;
  std::vector<char> bounce;
  fi_addr_t addr = FI_ADDR_UNSPEC;
  uint64_t tag = 0, ignore = 0;
  std::shared_ptr<TriggerCounter> cntr;  // native: the counter that fires it
  std::chrono::steady_clock::time_point posted_at{};
  std::list<OfiOp *>::iterator inflight_pos;  // agent: place in the in-flight list

  OfiOp() { ctx.self = this; }
  OfiOp(const OfiOp &) = delete;
  OfiOp &operator=(const OfiOp &) = delete;
};

// How a (buffer, count, datatype) lies in memory: one contiguous run (*contiguous, with its
// start and length) or not (then *bytes is the packed size).
Status buffer_layout(const void *buf, int count, MPI_Datatype dt, bool *contiguous,
                     void **start, std::size_t *bytes);
// Packs the op's send data into o.bounce (stream order: the agent calls it when the stream
// reached the op).
Status pack_send(OfiOp &o);
// Unpacks @p received bytes of o.bounce into the op's receive buffer.
Status unpack_recv(OfiOp &o, std::size_t received);

}  // namespace mpix
