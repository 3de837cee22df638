// Provider "ofi": libfabric tagged messages on an FI_EP_RDM endpoint (DESIGN.md §3).
//
// Native triggers (the libfabric provider has FI_TRIGGER, e.g. sockets): arm() posts each send
// and receive at enqueue time as a triggered operation whose threshold is on the stream's
// libfabric counter; when the stream reaches the op, fire() is fi_cntr_add(counter, 1) and
// libfabric posts it. A triggered receive sits in the counter's trigger list, not in the
// receive queue, until then, so it cannot match (or write the buffer) before the stream
// reaches it; the start-up self-test checks exactly that.
//
// Emulated triggers (tcp, shm, udp;ofi_rxd, verbs;ofi_rxm, or MPIX_OFI_NATIVE_TRIGGER=0): mpix
// keeps the deferred work itself; fire() posts the op. Either way allreduce goes to provider
// mpi in the collective slot (core/provider.hpp).
//
// The OfiProvider class (ofi_select.hpp has the factory). Threads: arm() and validate() run
// on enqueuing threads; fire(), progress(), busy() and shutdown() on the agent thread only, so
// the agent-side lists below need no lock.
#pragma once

#include <chrono>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/provider.hpp"
#include "providers/ofi/fabric.hpp"
#include "providers/ofi/ofi_op.hpp"
#include "providers/ofi/soft_match.hpp"
#include "providers/ofi/trigger_counter.hpp"

namespace mpix {

struct OfiOptions {
  bool native = false;     // post triggered ops at arm() (FI_TRIGGER)
  bool serialize = false;  // sends to one peer one at a time (no FI_ORDER_SAS, or forced)
  bool soft = false;       // mpix matches messages itself (soft_match.hpp)
  long timeout_s = 0;      // MPIX_TIMEOUT
  std::string why_mode;    // how native / serialize were decided
};

class OfiProvider final : public Provider {
 public:
  OfiProvider(std::unique_ptr<Fabric> fabric, const OfiOptions &opt);
  ~OfiProvider() override;
  // Posts the soft-matching header receives (before the agent starts).
  Status start();

  const char *name() const override { return "ofi"; }
  ProviderCaps caps() const override;
  Status comm_open(MPI_Comm comm, std::unique_ptr<ProviderComm> *out) override;
  Status comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out) override;
  Status validate(const Op &op) override;
  Status arm(Op &op, ExecStream *ex, FireRecipe *fire) override;
  Status fire(Op &op) override;
  void disarm(Op &op) override;
  void abandon(Op &op) override;
  bool progress(std::vector<Op *> &done) override;
  bool busy() const override;
  bool large_in_flight() const override;
  void shutdown() override;
  std::string describe() const override;
  uint64_t counters_opened() const { return counters_.opened(); }

 private:
  Status prepare(Op &op, std::unique_ptr<OfiOp> *out);
  ssize_t post(OfiOp &o, uint64_t flags);
  void post_emulated(OfiOp *o);
  void release_peer(fi_addr_t addr);
  bool retry_backlog();
  void start_inflight(OfiOp *o);
  void stop_inflight(OfiOp *o);
  void fail_now(OfiOp *o, int mpi_class, std::vector<Op *> *done,
                const char *why = "the transfer failed (provider ofi)");
  void finish(OfiOp *o, int mpi_class, std::size_t len, uint64_t tag, std::vector<Op *> &done);
  bool read_cq(std::vector<Op *> &done);
  void poke_counters();
  void check_timeouts(std::vector<Op *> &done);

  // Soft matching (ofi_soft.cpp).
  ssize_t post_soft_send(OfiOp &o, uint64_t flags);
  ssize_t post_slot(std::size_t i);
  void soft_fire_recv(OfiOp *o);
  void soft_slot_done(std::size_t i, std::size_t len, bool error);
  bool soft_progress(std::vector<Op *> &done);
  void soft_header(const SoftHeader &h, const char *data, std::size_t len, std::vector<Op *> &done);
  void soft_deliver(OfiOp *o, const SoftHeader &h, const char *data, std::size_t len,
                    std::vector<Op *> &done);
  void soft_post_payload(OfiOp *o, std::vector<Op *> &done);
  ssize_t soft_send_cts(OfiOp &o);
  // A completed rendezvous into the overflow buffer: fills the receive buffer, MPI_ERR_TRUNCATE.
  void soft_truncate(OfiOp &o, int *mpi_class, std::size_t *len);
  // Takes @p o out of the soft-matching queues; true when libfabric holds none of its operations.
  bool soft_forget(OfiOp *o);

  std::unique_ptr<Fabric> fabric_;
  OfiOptions opt_;
  StreamCounters counters_;

  // Agent thread only.
  std::list<OfiOp *> inflight_;  // posted (or fired), not complete; oldest first
  std::size_t native_inflight_ = 0;
  // In-flight ops of more than kEagerBytes (large_in_flight()).
  std::size_t large_inflight_ = 0;
  // Counters with native ops fired and not complete, and how many: the ones poke_counters()
  // revisits (a refused post waits in one of them).
  std::unordered_map<const TriggerCounter *, std::size_t> native_cntrs_;
  // Emulated posts refused with -FI_EAGAIN, in order, one queue per direction ([1]: sends):
  // a refused receive must not hold up the sends that its peer's receives wait for.
  std::deque<OfiOp *> backlog_[2];
  bool backlog_empty() const { return backlog_[0].empty() && backlog_[1].empty(); }
  std::map<fi_addr_t, std::deque<OfiOp *>> held_sends_;  // serialize: sends waiting per peer
  std::map<fi_addr_t, int> sends_out_;                   // serialize: sends in flight per peer
  std::vector<Op *> local_done_;  // completed without the network (MPI_PROC_NULL, errors)
  std::list<std::unique_ptr<OfiOp>> zombies_;  // timed out; libfabric may still hold the context
  std::chrono::steady_clock::time_point last_poke_{}, last_timeout_check_{};

  // Soft matching (agent thread only after start()).
  struct SoftSlot {
    OfiCtx ctx{};
    std::vector<char> buf;
    bool full = false, error = false;
    std::size_t len = 0;
  };
  std::vector<SoftSlot> slots_;          // fixed size: libfabric holds pointers into it
  std::deque<std::size_t> slot_order_;   // posted slots, in posting order
  std::deque<std::size_t> slot_repost_;  // read slots waiting to be posted again, in order
  SoftQueues soft_q_;
  std::unordered_map<uint32_t, OfiOp *> rndv_wait_;  // sends waiting for a clear-to-send
  std::deque<OfiOp *> soft_retry_;  // payload posts and clear-to-sends refused (EAGAIN)
  uint32_t next_rndv_id_ = 0;
};

}  // namespace mpix
