// OfiProvider: arming and firing ops (ofi_progress.cpp completes them, ofi_select.cpp makes
// the provider).
#include "providers/ofi/ofi_provider.hpp"

#include <rdma/fi_tagged.h>

#include <climits>
#include <thread>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/stream.hpp"
#include "providers/ofi/ofi_check.hpp"
#include "providers/ofi/ofi_comm.hpp"
#include "providers/ofi/tag_layout.hpp"

namespace mpix {

OfiProvider::OfiProvider(std::unique_ptr<Fabric> fabric, const OfiOptions &opt)
    : fabric_(std::move(fabric)), opt_(opt), counters_(*fabric_) {}

OfiProvider::~OfiProvider() { shutdown(); }

ProviderCaps OfiProvider::caps() const {
  ProviderCaps c;
  c.native_triggers = opt_.native;
  return c;
}

Status OfiProvider::comm_open(MPI_Comm comm, std::unique_ptr<ProviderComm> *out) {
  return ofi_comm_open(*fabric_, comm, out);
}

Status OfiProvider::comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out) {
  // Only ever ofi's own state: a context's p2p slot holds what this provider made.
  if (!old) return make_status(MPI_ERR_COMM, "provider ofi: the communicator has no ofi state");
  return static_cast<const OfiComm *>(old)->dup(out);
}

Status OfiProvider::validate(const Op &op) {
  if (!provider_comm<OfiComm>(op))
    return make_status(MPI_ERR_COMM, "provider ofi: the stream communicator has no ofi state");
  bool any_tag = op.kind == OpKind::recv && op.tag == MPI_ANY_TAG;
  if (!any_tag && (op.tag < 0 || op.tag > ofi_tag::kMaxTag))
    return make_status(MPI_ERR_TAG,
                       "tag %d is beyond what provider ofi carries (0..%d: %u tag "
                       "bits of its libfabric tag layout)",
                       op.tag, ofi_tag::kMaxTag, ofi_tag::kTagBits);
  return {};
}

// Everything about the op that does not depend on the data: where it goes, its tag, its buffer.
Status OfiProvider::prepare(Op &op, std::unique_ptr<OfiOp> *out) {
  const OfiComm &comm = *provider_comm<OfiComm>(op);
  auto o = std::make_unique<OfiOp>();
  o->op = &op;
  o->is_send = op.kind == OpKind::send;
  bool contiguous = true;
  void *start = nullptr;
  std::size_t bytes = 0;
  MPIX_TRY(
      buffer_layout(o->is_send ? op.sbuf : op.rbuf, op.count, op.dt, &contiguous, &start, &bytes));
  o->len = bytes;
  if (contiguous) {
    o->buf = start;
  } else {
    if (bytes > static_cast<std::size_t>(INT_MAX))
      return make_status(MPI_ERR_COUNT,
                         "provider ofi packs non-contiguous datatypes through "
                         "MPI_Pack, which is limited to %d bytes (message: %zu)",
                         INT_MAX, bytes);
    int pack_size = 0;
    MPIX_MPI_CHECK(MPI_Pack_size(op.count, op.dt, op.comm, &pack_size));
    o->packed = true;
    o->bounce.resize(std::max<std::size_t>(bytes, static_cast<std::size_t>(pack_size)));
    o->buf = o->bounce.data();
  }
  if (opt_.soft) o->stage = o->is_send ? SoftStage::header : SoftStage::wait_match;
  if (o->is_send) {
    o->addr = comm.addr(op.peer);
    o->tag = ofi_tag::encode(comm.ctx(), comm.rank(), op.tag);
  } else {
    // Receives match on the tag alone (the source rank is in it), so no FI_DIRECTED_RECV.
    o->addr = FI_ADDR_UNSPEC;
    bool any_src = op.peer == MPI_ANY_SOURCE, any_tag = op.tag == MPI_ANY_TAG;
    o->tag = ofi_tag::encode(comm.ctx(), any_src ? 0 : op.peer, any_tag ? 0 : op.tag);
    o->ignore = (any_src ? ofi_tag::kSrcMask : 0) | (any_tag ? ofi_tag::kTagMask : 0);
  }
  *out = std::move(o);
  return {};
}

ssize_t OfiProvider::post(OfiOp &o, uint64_t flags) {
  if (o.is_send && o.stage != SoftStage::none) return post_soft_send(o, flags);
  iovec iov{o.buf, o.len};
  fi_msg_tagged m{};
  m.msg_iov = &iov;
  m.desc = nullptr;
  m.iov_count = 1;
  m.addr = o.addr;
  m.tag = o.tag;
  m.ignore = o.ignore;
  m.context = &o.ctx;
  return o.is_send ? fi_tsendmsg(fabric_->ep(), &m, flags) : fi_trecvmsg(fabric_->ep(), &m, flags);
}

Status OfiProvider::arm(Op &op, ExecStream *ex, FireRecipe *fire) {
  // The stream fires its triggered ops as any other: the agent sees the trigger word and
  // raises the op's counter (fire()).
  (void)ex;
  (void)fire;
  if (op.peer == MPI_PROC_NULL) return {};
  std::unique_ptr<OfiOp> o;
  MPIX_TRY(prepare(op, &o));
  // A gated op (Op::gate) fires out of its arming order, which a counter cannot express: it
  // is posted when fired.
  if (opt_.native && !op.gate) {
    // Called with the stream's enqueue mutex held: thresholds follow stream order, and so does
    // the order in which the ops enter the counter's trigger list.
    uint64_t threshold = 0;
    MPIX_TRY(counters_.next(op.stream, o->is_send, &o->cntr, &threshold, &o->bump_prev));
    o->native = true;
    o->ctx.fi.event_type = FI_TRIGGER_THRESHOLD;
    o->ctx.fi.trigger.threshold.cntr = o->cntr->fid.get();
    o->ctx.fi.trigger.threshold.threshold = threshold;
    ssize_t rc = post(*o, FI_TRIGGER);
    // Queuing a triggered op only allocates, but be patient if a provider says "not now".
    for (int i = 0; rc == -FI_EAGAIN && i < 100000; ++i) {
      std::this_thread::yield();
      rc = post(*o, FI_TRIGGER);
    }
    if (rc < 0) {
      counters_.unget(*o->cntr, threshold);
      return ofi_status(rc, o->is_send ? "fi_tsendmsg(FI_TRIGGER)" : "fi_trecvmsg(FI_TRIGGER)",
                        __FILE__, __LINE__);
    }
  }
  op.prov = o.release();  // owned by the op until it completes (finish() deletes it)
  return {};
}

void OfiProvider::start_inflight(OfiOp *o) {
  o->inflight_pos = inflight_.insert(inflight_.end(), o);
  o->listed = true;
  o->large = o->len > kEagerBytes;
  if (o->large) ++large_inflight_;
  if (o->native) {
    ++native_inflight_;
    ++native_cntrs_[o->cntr.get()];
  }
}

void OfiProvider::stop_inflight(OfiOp *o) {
  if (!o->listed) return;
  inflight_.erase(o->inflight_pos);
  o->listed = false;
  if (o->large) --large_inflight_;
  if (!o->native) return;
  --native_inflight_;
  auto it = native_cntrs_.find(o->cntr.get());
  if (it != native_cntrs_.end() && --it->second == 0) native_cntrs_.erase(it);
}

Status OfiProvider::fire(Op &op) {
  op_posted(op);
  if (op.peer == MPI_PROC_NULL) {
    MPI_Status st{};
    st.MPI_SOURCE = MPI_PROC_NULL;
    st.MPI_TAG = MPI_ANY_TAG;
    MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
    op_completed(op, st);
    local_done_.push_back(&op);
    return {};
  }
  auto *o = static_cast<OfiOp *>(op.prov);
  o->posted_at = std::chrono::steady_clock::now();  // MPIX_TIMEOUT counts from here
  if (o->packed && o->is_send) {
    // Now, not at arm(): the stream has just reached the op, so the data is final.
    Status st = pack_send(*o);
    if (!st.is_ok()) {
      MPIX_LOG(error, "ofi", "send to rank %d: %s", op.peer, st.what().c_str());
      o->fail_class = st.code();
    }
  }
  if (o->native) {
    start_inflight(o);
    // The whole firing step: libfabric posts the op inside fi_cntr_add. A failed pack still
    // fires, so that the counter keeps counting this stream's ops (the failure is reported
    // when the op completes).
    // The first op of a chained counter also gives the previous counter the step that lets
    // its link run (trigger_counter.hpp).
    int rc = o->bump_prev ? fi_cntr_add(o->cntr->prev->fid.get(), 1) : 0;
    if (rc == 0) rc = fi_cntr_add(o->cntr->fid.get(), 1);
    if (rc != 0) {
      // The agent fails the op; libfabric may still hold the triggered op, so its context
      // stays alive (as after a timeout) until libfabric gives it back.
      stop_inflight(o);
      o->timed_out = true;
      o->op = nullptr;
      op.prov = nullptr;
      zombies_.emplace_back(o);
      return ofi_status(rc, "fi_cntr_add", __FILE__, __LINE__);
    }
    return {};
  }
  if (o->fail_class != MPI_SUCCESS) {
    fail_now(o, o->fail_class, nullptr);
    return {};
  }
  if (o->stage == SoftStage::wait_match) {
    soft_fire_recv(o);  // mpix matches it; libfabric sees only its rendezvous payload, if any
    return {};
  }
  post_emulated(o);
  return {};
}

void OfiProvider::abandon(Op &op) {
  const auto *o = static_cast<const OfiOp *>(op.prov);
  if (!o || !o->native) return;
  // Its triggered op is in libfabric, waiting for its counter step, and cannot be taken back:
  // the next fire on that counter would post it (a message the caller was told failed, from a
  // buffer it may have freed). No later op of this stream's direction is armed, so the
  // counter never gets that far.
  counters_.poison(op.stream.get(), o->is_send);
  MPIX_LOG(warn, "ofi",
           "an enqueued %s to %d (tag %d) failed after it was handed to libfabric as a triggered "
           "op; later %ss on this stream fail (MPIX_OFI_NATIVE_TRIGGER=0 avoids this)",
           o->is_send ? "send" : "receive", op.peer, op.tag, o->is_send ? "send" : "receive");
}

void OfiProvider::disarm(Op &op) {
  std::unique_ptr<OfiOp> o(static_cast<OfiOp *>(op.prov));
  op.prov = nullptr;
  if (!o || !o->native) return;  // never posted: libfabric has not seen it
  // Posted at arm() as a triggered op: libfabric holds its context until the op runs or the
  // endpoint closes, so it stays alive as a zombie (as after a refused fi_cntr_add).
  o->timed_out = true;
  o->op = nullptr;
  zombies_.push_back(std::move(o));
}

void OfiProvider::post_emulated(OfiOp *o) {
  if (opt_.serialize && o->is_send) {
    // One send per peer between here and its delivery; later ones wait their turn, in order.
    int &active = sends_out_[o->addr];
    if (active) {
      held_sends_[o->addr].push_back(o);
      return;
    }
    active = 1;
  }
  auto &backlog = backlog_[o->is_send ? 1 : 0];
  if (!backlog.empty()) {  // keep order behind earlier refused posts of this direction
    backlog.push_back(o);
    return;
  }
  uint64_t flags = (opt_.serialize && o->is_send) ? FI_DELIVERY_COMPLETE : 0;
  ssize_t rc = post(*o, flags);
  if (rc == -FI_EAGAIN) {
    backlog.push_back(o);
    return;
  }
  if (rc < 0) {
    MPIX_LOG(error, "ofi", "%s rank %d: %s", o->is_send ? "send to" : "receive from", o->op->peer,
             fi_strerror(static_cast<int>(-rc)));
    fail_now(o, ofi_error_class(static_cast<int>(rc)), nullptr);
    return;
  }
  start_inflight(o);
}

bool OfiProvider::retry_backlog() {
  bool any = false;
  // Each direction until libfabric refuses one of its posts: sends and receives use different
  // resources, and the other direction's completions are what frees a refused one's.
  for (auto &backlog : backlog_) {
    while (!backlog.empty()) {
      OfiOp *o = backlog.front();
      uint64_t flags = (opt_.serialize && o->is_send) ? FI_DELIVERY_COMPLETE : 0;
      ssize_t rc = post(*o, flags);
      if (rc == -FI_EAGAIN) break;
      backlog.pop_front();
      any = true;
      if (rc < 0) {
        fail_now(o, ofi_error_class(static_cast<int>(rc)), nullptr);
        continue;
      }
      start_inflight(o);
    }
  }
  return any;
}

std::string OfiProvider::describe() const {
  std::string s = "ofi: libfabric " + std::to_string(FI_MAJOR(fi_version())) + "." +
                  std::to_string(FI_MINOR(fi_version())) + ", " + fabric_->describe() + "; ";
  s += opt_.native ? "native triggers (triggered ops on a libfabric counter per stream)"
                   : "emulated triggers (mpix deferred-work queue)";
  if (opt_.serialize) s += "; sends to a peer serialized";
  if (opt_.soft)
    s += "; MPI matching by mpix (headers as untagged messages, rendezvous above " +
         std::to_string(kSoftEagerMax) + " B)";
  if (opt_.timeout_s > 0) s += "; MPIX_TIMEOUT=" + std::to_string(opt_.timeout_s) + " s";
  return s;
}

}  // namespace mpix
