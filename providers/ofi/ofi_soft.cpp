// OfiProvider: MPI matching done by mpix (soft_match.hpp says why and how).
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "providers/ofi/ofi_check.hpp"
#include "providers/ofi/ofi_comm.hpp"
#include "providers/ofi/ofi_provider.hpp"

namespace mpix {

Status OfiProvider::start() {
  if (!opt_.soft) return {};
  slots_.resize(kSoftSlots);  // never resized again: libfabric holds pointers into it
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].ctx.self = nullptr;
    slots_[i].ctx.slot = i;
    slots_[i].buf.resize(sizeof(SoftHeader) + kSoftEagerMax);
    ssize_t rc = post_slot(i);
    if (rc < 0)
      return ofi_status(rc, "fi_recvmsg (soft-matching header receive)", __FILE__, __LINE__);
    slot_order_.push_back(i);
  }
  return {};
}

ssize_t OfiProvider::post_slot(std::size_t i) {
  SoftSlot &s = slots_[i];
  s.full = s.error = false;
  s.len = 0;
  iovec iov{s.buf.data(), s.buf.size()};
  fi_msg m{};
  m.msg_iov = &iov;
  m.iov_count = 1;
  m.addr = FI_ADDR_UNSPEC;
  m.context = &s.ctx;
  return fi_recvmsg(fabric_->ep(), &m, 0);
}

// A soft send's next step: its header (eager: with the data), or its rendezvous payload.
ssize_t OfiProvider::post_soft_send(OfiOp &o, uint64_t flags) {
  if (o.stage == SoftStage::header) {
    const bool eager = o.len <= kSoftEagerMax;
    if (o.wire.empty()) {
      // Built once, when the stream has reached the op (pack_send has run for packed data).
      SoftHeader h{};
      h.match = o.tag;
      h.size = o.len;
      h.kind = eager ? SoftKind::eager : SoftKind::rts;
      if (!eager) h.id = o.rndv_id = next_rndv_id_++ & static_cast<uint32_t>(ofi_tag::kTagMask);
      o.wire.resize(sizeof h + (eager ? o.len : 0));
      std::memcpy(o.wire.data(), &h, sizeof h);
      if (eager && o.len) std::memcpy(o.wire.data() + sizeof h, o.buf, o.len);
    }
    if (!eager) {
      // The header alone; the send completes with its payload, after the clear-to-send.
      ssize_t rc = fi_inject(fabric_->ep(), o.wire.data(), o.wire.size(), o.addr);
      if (rc == 0) {
        o.stage = SoftStage::wait_cts;
        rndv_wait_[o.rndv_id] = &o;
      }
      return rc;
    }
    iovec iov{o.wire.data(), o.wire.size()};
    fi_msg m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.addr = o.addr;
    m.context = &o.ctx;
    ssize_t rc = fi_sendmsg(fabric_->ep(), &m, flags);
    if (rc == 0) o.stage = SoftStage::posted;
    return rc;
  }
  // SoftStage::payload
  iovec iov{o.buf, o.len};
  fi_msg_tagged m{};
  m.msg_iov = &iov;
  m.iov_count = 1;
  m.addr = o.addr;
  m.tag = soft_payload_tag(o.tag, o.rndv_id);
  m.context = &o.ctx;
  ssize_t rc = fi_tsendmsg(fabric_->ep(), &m, flags);
  if (rc == 0) o.stage = SoftStage::posted;
  return rc;
}

ssize_t OfiProvider::soft_send_cts(OfiOp &o) {
  SoftHeader h{};
  h.match = o.match;
  h.id = o.rndv_id;
  h.kind = SoftKind::cts;
  ssize_t rc = fi_inject(fabric_->ep(), &h, sizeof h, o.reply_addr);
  if (rc == 0) o.cts_pending = false;
  return rc;
}

void OfiProvider::soft_fire_recv(OfiOp *o) {
  start_inflight(o);  // MPIX_TIMEOUT and busy() see it from now on
  SoftQueues::Unexpected u;
  if (soft_q_.post(o, &u)) soft_deliver(o, u.hdr, u.data.data(), u.data.size(), local_done_);
}

void OfiProvider::soft_deliver(OfiOp *o, const SoftHeader &h, const char *data, std::size_t len,
                               std::vector<Op *> &done) {
  o->match = h.match;
  if (h.kind == SoftKind::eager) {
    // Only now, with the stream at the receive, is its buffer written.
    std::size_t n = std::min<std::size_t>(len, o->len);
    if (n) std::memcpy(o->buf, data, n);
    finish(o, h.size > o->len ? MPI_ERR_TRUNCATE : MPI_SUCCESS, n, 0, done);
    return;
  }
  const OfiComm &comm = *provider_comm<OfiComm>(*o->op);
  o->rndv_id = h.id;
  o->reply_addr = comm.addr(ofi_tag::source_of(h.match));
  o->tag = soft_payload_tag(h.match, h.id);
  o->ignore = 0;
  if (h.size > o->len) {
    // Too long for the buffer: MPI_ERR_TRUNCATE, with the buffer filled. libfabric is not asked
    // to truncate (shm 1.17 never completes a truncated receive of a large message).
    o->overflow.resize(h.size);
    o->trunc_buf = o->buf;
    o->trunc_cap = o->len;
    o->buf = o->overflow.data();
    o->len = h.size;
  }
  o->stage = SoftStage::payload;
  soft_post_payload(o, done);
}

void OfiProvider::soft_truncate(OfiOp &o, int *mpi_class, std::size_t *len) {
  if (o.overflow.empty() || *mpi_class != MPI_SUCCESS) return;
  if (o.trunc_cap) std::memcpy(o.trunc_buf, o.overflow.data(), o.trunc_cap);
  *len = o.trunc_cap;
  *mpi_class = MPI_ERR_TRUNCATE;
  o.buf = o.trunc_buf;
  o.len = o.trunc_cap;
}

// Rendezvous: the receiver posts the payload's exact receive, then sends the clear-to-send;
// the sender, on the clear-to-send, posts the payload.
void OfiProvider::soft_post_payload(OfiOp *o, std::vector<Op *> &done) {
  if (o->stage == SoftStage::payload) {
    uint64_t flags = (opt_.serialize && o->is_send) ? FI_DELIVERY_COMPLETE : 0;
    ssize_t rc = post(*o, flags);
    if (rc == -FI_EAGAIN) {
      soft_retry_.push_back(o);
      return;
    }
    if (rc < 0) {
      MPIX_LOG(error, "ofi", "rendezvous %s rank %d: %s", o->is_send ? "send to" : "receive from",
               o->op->peer, fi_strerror(static_cast<int>(-rc)));
      finish(o, ofi_error_class(static_cast<int>(rc)), 0, 0, done);
      return;
    }
    o->stage = SoftStage::posted;
    if (o->is_send) return;
    o->cts_pending = true;
  }
  if (!o->cts_pending) return;
  ssize_t rc = soft_send_cts(*o);
  if (rc == -FI_EAGAIN) {
    soft_retry_.push_back(o);
  } else if (rc < 0) {
    // The payload receive is posted: cancel it; its completion reports the failure.
    MPIX_LOG(error, "ofi", "clear-to-send to rank %d: %s", o->op->peer,
             fi_strerror(static_cast<int>(-rc)));
    o->cts_pending = false;
    o->fail_class = ofi_error_class(static_cast<int>(rc));
    fi_cancel(&fabric_->ep()->fid, &o->ctx);
  }
}

void OfiProvider::soft_slot_done(std::size_t i, std::size_t len, bool error) {
  SoftSlot &s = slots_[i];
  s.full = true;
  s.error = error;
  s.len = len;
}

void OfiProvider::soft_header(const SoftHeader &h, const char *data, std::size_t len,
                              std::vector<Op *> &done) {
  if (h.kind == SoftKind::cts) {
    auto it = rndv_wait_.find(h.id);
    if (it == rndv_wait_.end()) {
      MPIX_LOG(warn, "ofi", "clear-to-send for rendezvous %u, which no send awaits (timed out?)",
               h.id);
      return;
    }
    OfiOp *o = it->second;
    rndv_wait_.erase(it);
    o->stage = SoftStage::payload;
    soft_post_payload(o, done);
    return;
  }
  if ((h.kind != SoftKind::eager && h.kind != SoftKind::rts) ||
      (h.kind == SoftKind::eager && len != h.size)) {
    MPIX_LOG(error, "ofi", "dropping a malformed soft-matching header (kind %u, %zu of %llu bytes)",
             static_cast<unsigned>(h.kind), len, static_cast<unsigned long long>(h.size));
    return;
  }
  OfiOp *o = soft_q_.arrive(h, data, h.kind == SoftKind::eager ? len : 0);
  if (o) soft_deliver(o, h, data, len, done);
}

bool OfiProvider::soft_progress(std::vector<Op *> &done) {
  bool any = false;
  // Slots in the order they were posted, which is the order messages filled them.
  while (!slot_order_.empty() && slots_[slot_order_.front()].full) {
    std::size_t i = slot_order_.front();
    slot_order_.pop_front();
    SoftSlot &s = slots_[i];
    if (!s.error && s.len >= sizeof(SoftHeader)) {
      SoftHeader h;
      std::memcpy(&h, s.buf.data(), sizeof h);
      soft_header(h, s.buf.data() + sizeof h, s.len - sizeof h, done);
    } else if (!s.error) {
      MPIX_LOG(error, "ofi", "dropping a %zu-byte message too short for a soft-matching header",
               s.len);
    }
    slot_repost_.push_back(i);
    any = true;
  }
  while (!slot_repost_.empty()) {
    std::size_t i = slot_repost_.front();
    ssize_t rc = post_slot(i);
    if (rc == -FI_EAGAIN) break;
    slot_repost_.pop_front();
    if (rc < 0) {
      MPIX_LOG(error, "ofi", "fi_recvmsg (soft-matching header receive): %s; %zu left",
               fi_strerror(static_cast<int>(-rc)), slot_order_.size());
      continue;
    }
    slot_order_.push_back(i);
  }
  for (std::size_t n = soft_retry_.size(); n > 0; --n) {
    OfiOp *o = soft_retry_.front();
    soft_retry_.pop_front();
    soft_post_payload(o, done);  // queues itself again if still refused
    any = true;
  }
  return any;
}

bool OfiProvider::soft_forget(OfiOp *o) {
  soft_retry_.erase(std::remove(soft_retry_.begin(), soft_retry_.end(), o), soft_retry_.end());
  o->cts_pending = false;
  switch (o->stage) {
    case SoftStage::wait_match:
      soft_q_.remove(o);
      return true;
    case SoftStage::wait_cts:
      rndv_wait_.erase(o->rndv_id);
      return true;
    case SoftStage::payload:
    case SoftStage::header:
      return true;
    case SoftStage::none:
    case SoftStage::posted:
      break;
  }
  return false;
}

}  // namespace mpix
