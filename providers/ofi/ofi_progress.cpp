// OfiProvider: completions, the -FI_EAGAIN retry paths, and MPIX_TIMEOUT.
#include <rdma/fi_tagged.h>

#include <algorithm>

#include "base/log.hpp"
#include "providers/ofi/ofi_check.hpp"
#include "providers/ofi/ofi_provider.hpp"
#include "providers/ofi/tag_layout.hpp"

namespace mpix {
namespace {

using Clock = std::chrono::steady_clock;

void set_send_status(MPI_Status &st) {
  st.MPI_SOURCE = MPI_ANY_SOURCE;
  st.MPI_TAG = MPI_ANY_TAG;
  MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
}

}  // namespace

// An op that never reached the network (or no longer can): report it with @p mpi_class.
void OfiProvider::fail_now(OfiOp *o, int mpi_class, std::vector<Op *> *done, const char *why) {
  std::unique_ptr<OfiOp> holder(o);
  Op &op = *o->op;
  op_failed(op, make_status(mpi_class, "%s", why));
  op.prov = nullptr;
  if (opt_.serialize && o->is_send) release_peer(o->addr);
  (done ? *done : local_done_).push_back(&op);
}

void OfiProvider::release_peer(fi_addr_t addr) {
  sends_out_[addr] = 0;
  auto it = held_sends_.find(addr);
  if (it == held_sends_.end() || it->second.empty()) return;
  OfiOp *next = it->second.front();
  it->second.pop_front();
  post_emulated(next);
}

void OfiProvider::finish(OfiOp *o, int mpi_class, std::size_t len, uint64_t tag,
                         std::vector<Op *> &done) {
  if (o->timed_out) {
    // Already reported; libfabric has now let go of the context.
    zombies_.remove_if([o](const std::unique_ptr<OfiOp> &z) { return z.get() == o; });
    return;
  }
  std::unique_ptr<OfiOp> holder(o);
  stop_inflight(o);
  // Completed, so posted: the link into its counter has run, and the previous counter may go.
  if (o->native && o->cntr->prev) o->cntr->prev.reset();
  Op &op = *o->op;
  MPI_Status st{};
  if (o->fail_class != MPI_SUCCESS) mpi_class = o->fail_class;
  if (o->is_send) {
    set_send_status(st);
    if (opt_.serialize) release_peer(o->addr);
  } else {
    // Soft matching: the completion's tag is the payload's; the header said who sent what.
    if (o->stage != SoftStage::none) {
      tag = o->match;
      soft_truncate(*o, &mpi_class, &len);
    }
    bool have_tag = mpi_class == MPI_SUCCESS || mpi_class == MPI_ERR_TRUNCATE;
    st.MPI_SOURCE = have_tag ? ofi_tag::source_of(tag) : op.peer;
    st.MPI_TAG = have_tag ? ofi_tag::tag_of(tag) : op.tag;
    if (o->packed && have_tag) {
      Status us = unpack_recv(*o, len);
      if (!us.is_ok()) {
        MPIX_LOG(error, "ofi", "receive from rank %d: %s", op.peer, us.what().c_str());
        if (mpi_class == MPI_SUCCESS) mpi_class = us.code();
      }
    }
    MPI_Status_set_elements_x(&st, MPI_BYTE, have_tag ? static_cast<MPI_Count>(len) : 0);
  }
  st.MPI_ERROR = mpi_class;
  op_completed(op, st);
  op.prov = nullptr;
  done.push_back(&op);
}

bool OfiProvider::read_cq(std::vector<Op *> &done) {
  bool any = false;
  fi_cq_tagged_entry e[32];
  for (int batch = 0; batch < 8; ++batch) {
    ssize_t n = fi_cq_read(fabric_->cq(), e, 32);
    if (n > 0) {
      any = true;
      for (ssize_t i = 0; i < n; ++i) {
        auto *c = static_cast<OfiCtx *>(e[i].op_context);
        if (!c) continue;
        if (!c->self) soft_slot_done(c->slot, e[i].len, false);
        else finish(c->self, MPI_SUCCESS, e[i].len, e[i].tag, done);
      }
      if (n < 32) break;
      continue;
    }
    if (n != -FI_EAVAIL) {
      if (n != -FI_EAGAIN)
        MPIX_LOG(error, "ofi", "fi_cq_read: %s", fi_strerror(static_cast<int>(-n)));
      break;
    }
    fi_cq_err_entry err{};
    if (fi_cq_readerr(fabric_->cq(), &err, 0) != 1) break;
    any = true;
    if (!err.op_context) {
      // Not about one of our operations (sockets reports a broken peer connection this way).
      MPIX_LOG(warn, "ofi", "libfabric error not tied to an operation: %s", fi_strerror(err.err));
      continue;
    }
    auto *c = static_cast<OfiCtx *>(err.op_context);
    if (!c->self) {
      MPIX_LOG(error, "ofi", "soft-matching header receive failed: %s", fi_strerror(err.err));
      soft_slot_done(c->slot, 0, true);
      continue;
    }
    auto *o = c->self;
    if (!o->timed_out)
      MPIX_LOG(error, "ofi", "%s rank %d (tag %d) failed: %s",
               o->is_send ? "send to" : "receive from", o->op->peer, o->op->tag,
               err.prov_errno
                   ? fi_cq_strerror(fabric_->cq(), err.prov_errno, err.err_data, nullptr, 0)
                   : fi_strerror(err.err));
    finish(o, ofi_error_class(err.err), err.len, err.tag, done);
  }
  return any;
}

// sockets leaves a triggered op whose post met -FI_EAGAIN in the counter's list until the
// counter changes again; adding 0 makes it look at the list once more without moving it.
// Every counter with native ops in flight: the refused op may sit in any of them (one per
// chain at most, since the chain holds everything behind it).
void OfiProvider::poke_counters() {
  auto now = Clock::now();
  if (now - last_poke_ < std::chrono::microseconds(200)) return;
  last_poke_ = now;
  for (const auto &c : native_cntrs_) fi_cntr_add(c.first->fid.get(), 0);
}

void OfiProvider::check_timeouts(std::vector<Op *> &done) {
  auto now = Clock::now();
  if (now - last_timeout_check_ < std::chrono::milliseconds(50)) return;
  last_timeout_check_ = now;
  const auto limit = std::chrono::seconds(opt_.timeout_s);
  auto expired = [&](const OfiOp *o) { return now - o->posted_at >= limit; };
  auto describe = [&](const OfiOp *o, const char *where) {
    MPIX_LOG(error, "ofi",
             "%s rank %d (tag %d) %s for MPIX_TIMEOUT=%ld s; failing it (has the "
             "peer failed?)",
             o->is_send ? "send to" : "receive from", o->op->peer, o->op->tag, where,
             opt_.timeout_s);
  };
  // In flight: oldest first, so the scan stops at the first one still in time.
  while (!inflight_.empty() && expired(inflight_.front())) {
    OfiOp *o = inflight_.front();
    describe(o, "got no completion");
    stop_inflight(o);
    if (o->stage != SoftStage::none && soft_forget(o)) {
      // Waiting in mpix's own queues: libfabric holds nothing of it.
      fail_now(o, MPI_ERR_OTHER, &done, "no completion within MPIX_TIMEOUT (has the peer failed?)");
      continue;
    }
    // The context stays ours until libfabric gives it back (the cancellation's completion).
    fi_cancel(&fabric_->ep()->fid, &o->ctx);
    o->timed_out = true;
    Op &op = *o->op;
    op_failed(op, make_status(MPI_ERR_OTHER,
                              "no completion within MPIX_TIMEOUT=%ld s (has the "
                              "peer failed?)",
                              opt_.timeout_s));
    op.prov = nullptr;
    o->op = nullptr;
    done.push_back(&op);
    bool serialized_send = opt_.serialize && o->is_send;
    fi_addr_t addr = o->addr;
    zombies_.emplace_back(o);
    if (serialized_send) release_peer(addr);
  }
  // Not yet posted (refused with -FI_EAGAIN, or waiting behind a send to the same peer).
  for (auto &backlog : backlog_) {
    for (auto it = backlog.begin(); it != backlog.end();) {
      if (!expired(*it)) {
        ++it;
        continue;
      }
      OfiOp *o = *it;
      it = backlog.erase(it);
      describe(o, "could not be posted");
      fail_now(o, MPI_ERR_OTHER, &done, "could not be posted within MPIX_TIMEOUT");
    }
  }
  for (auto &q : held_sends_) {
    while (!q.second.empty() && expired(q.second.front())) {
      OfiOp *o = q.second.front();
      q.second.pop_front();
      describe(o, "waited behind an undelivered send");
      fail_now(o, MPI_ERR_OTHER, &done, "waited behind an undelivered send for MPIX_TIMEOUT");
    }
  }
}

bool OfiProvider::progress(std::vector<Op *> &done) {
  bool any = read_cq(done);  // also drives progress of manual-progress providers
  if (opt_.soft) any |= soft_progress(done);
  if (!backlog_empty()) any |= retry_backlog();
  if (native_inflight_) poke_counters();
  if (opt_.timeout_s > 0 && (!inflight_.empty() || !backlog_empty() || !held_sends_.empty()))
    check_timeouts(done);
  if (!local_done_.empty()) {
    done.insert(done.end(), local_done_.begin(), local_done_.end());
    local_done_.clear();
    any = true;
  }
  return any;
}

bool OfiProvider::busy() const {
  if (!inflight_.empty() || !backlog_empty() || !local_done_.empty() || !soft_retry_.empty())
    return true;
  for (const auto &q : held_sends_)
    if (!q.second.empty()) return true;
  return false;
}

// A message of kEagerBytes or less is sent whole, and its receive completes when the data
// arrives: polling faster does not move it, and on few CPUs the agent holding
// its core between polls kept the peer's threads (the stream that fires the next send) off it,
// for whole busy-poll periods. Larger ones (rendezvous, shm's segmented copies) and posts
// refused for want of room move only while this rank polls.
bool OfiProvider::large_in_flight() const { return large_inflight_ > 0 || !backlog_empty(); }

void OfiProvider::shutdown() {
  if (!fabric_) return;
  if (!inflight_.empty() || !backlog_empty()) {
    // Ops still hold libfabric contexts and counters: leave everything open (process exit
    // reclaims it) rather than close objects libfabric still uses.
    MPIX_LOG(warn, "ofi", "shutdown with %zu op(s) in flight; libfabric objects left open",
             inflight_.size() + backlog_[0].size() + backlog_[1].size());
    return;
  }
  for (auto &z : zombies_) z->cntr.reset();
  counters_.clear();
  fabric_.reset();  // closes the endpoint first; zombie contexts are free after that
  zombies_.clear();
  slots_.clear();
}

}  // namespace mpix
