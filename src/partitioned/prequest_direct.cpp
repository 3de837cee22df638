// PRequest, host side of direct rounds (partitioned/direct_link.hpp): what the streams run.
#include <algorithm>
#include <chrono>
#include <vector>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/comm_ctx.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "partitioned/prequest.hpp"
#include "partitioned/round_mirror.hpp"

namespace mpix {

Status PRequest::direct_known(bool block, bool *known) {
  *known = direct_.load(std::memory_order_acquire) != kDirectUnknown;
  if (*known || !block) return {};
  // The agent decides once the peer's header or answer is in: the peer's request must exist
  // (MPI-4 lets a partitioned wait block until then).
  Backoff backoff;
  const auto t0 = std::chrono::steady_clock::now();
  bool warned = false;
  for (;;) {
    const uint64_t epoch = notifier().epoch();
    if (direct_.load(std::memory_order_acquire) != kDirectUnknown) break;
    if (!warned && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
      MPIX_LOG(warn, "api",
               "partitioned %s %s %d tag %d: waited 10 s for the peer's partitioned request "
               "(its MPIX_%s_init) to match this one",
               side_ == Side::send ? "send" : "receive", side_ == Side::send ? "to" : "from", peer_,
               tag_, side_ == Side::send ? "Precv" : "Psend");
      warned = true;
    }
    backoff.pause(epoch);
  }
  *known = true;
  return {};
}

Status PRequest::share_device_marks(bool local, const MarksAlloc &alloc, uint64_t **out) {
  std::lock_guard<std::mutex> lk(mu_);
  *out = nullptr;
  if (!local) {
    if (dmarks_waited_)
      return make_status(MPI_ERR_REQUEST,
                         "a device request of this partitioned send made on another GPU than "
                         "its buffer's, after a direct round waited for the marks of the "
                         "buffer's GPU: make it before the first MPIX_Pwait_enqueue / MPIX_Wait");
    foreign_marks_ = true;
    return {};
  }
  if (!words_->dmarks) {
    // A stream's mark of this round may not be in its host word yet: the device marks would
    // miss it, and the round's copy, waiting for them, would never start.
    const uint64_t R = words_->R(current_round());
    if (active_ && std::find(enq_marks_.begin(), enq_marks_.end(), R) != enq_marks_.end())
      return make_status(MPI_ERR_REQUEST,
                         "MPIX_Prequest_create on a send with a partition marked by "
                         "MPIX_Pready_enqueue in its active round: make device requests "
                         "before that, or after the round's wait");
    // The marks the host words hold now (host MPIX_Pready of an active round), under the lock
    // the host's MPIX_Pready takes: none is missed.
    std::vector<uint64_t> init;
    init.reserve(words_->part.size());
    for (const SignalWord &w : words_->part) init.push_back(load_signal(w.word));
    MPIX_TRY(alloc(init, words_.get()));
  }
  *out = words_->dmarks;
  return {};
}

Status PRequest::direct_push(uint64_t r, bool write_done) {
  if (!side_stream_) MPIX_TRY(direct_stream_acquire(be_, device_, &side_stream_));
  ExecStream *side = side_stream_.get();
  const uint64_t R = words_->R(r), Rr = target_.rbase + 2 * r;
  // Every partition marked ready (by kernels on any stream, or by the host: the data is
  // written): the device marks where every device request shares them, else the host words.
  // And the receiver's round started (its buffer may be written).
  MarkWait marks;
  std::vector<StreamMemOp> waits;
  if (words_->dmarks && !foreign_marks_) {
    marks = {words_->dmarks, words_->part.size(), R};
    dmarks_waited_ = true;
  } else {
    waits.reserve(words_->part.size() + 1);
    for (const SignalWord &w : words_->part) waits.push_back({StreamMemOp::wait, w.word, R});
  }
  waits.push_back({StreamMemOp::wait, target_.open, Rr - 1, true});
  // Then the copy and the arrival mark: one kernel that waits, copies and marks where the
  // round is small (each stream call costs the host microseconds), else waits, the copy
  // engine and a write.
  const uint64_t bytes = static_cast<uint64_t>(partitions_) * count_ * type_size_;
  MPIX_TRY(side->waits_copy_then_write(marks, waits.data(), waits.size(), target_.dst, buf_, bytes,
                                       target_.arrived, Rr, true, &push_facts_));
  return write_done ? side->write_value(words_->done.word, R) : Status{};
}

Status PRequest::direct_round_ops(uint64_t r, std::vector<StreamMemOp> *ops) {
  const uint64_t R = words_->R(r);
  if (side_ == Side::send) {
    // The copy runs on a stream of mpix's, started from here and gated on the partitions'
    // ready marks, not on this stream: a receive waited for earlier on this stream (MPI's usual
    // order, receives before sends, on both ranks) must not hold it back. This stream waits
    // for the arrival mark the copy sets.
    MPIX_TRY(direct_push(r, false));
    ops->push_back({StreamMemOp::wait, target_.arrived, target_.rbase + 2 * r, true});
  } else {
    ops->push_back({StreamMemOp::wait, slot_.words + 1, R, true});
  }
  ops->push_back({StreamMemOp::write, words_->done.word, R});
  ops->push_back({StreamMemOp::write, words_->round.word, R});
  round_mirrors_append(*words_, R, ops);
  return {};
}

Status PRequest::direct_arrived(uint64_t r, bool *yes) {
  uint64_t v = 0;
  MPIX_TRY(be_->copy_sync(&v, slot_.words + 1, sizeof v));
  *yes = reached(v, words_->R(r));
  return {};
}

void PRequest::path(int *direct, MPI_Count *host_steps) const {
  const int d = direct_.load(std::memory_order_acquire);
  if (direct) *direct = d == kDirectUnknown ? -1 : d == kDirectYes ? 1 : 0;
  if (host_steps) *host_steps = static_cast<MPI_Count>(host_steps_.load());
}

void PRequest::set_round_status(uint64_t k, int error) {
  const MPI_Status st = round_status(error);
  std::lock_guard<std::mutex> lk(status_mu_);
  round_status_ = st;
  status_round_ = k;
  // MPIX_Pwait_enqueue's statuses of round k (the stream reads them after done).
  for (std::size_t i = 0; i < enqueued_status_.size();) {
    if (enqueued_status_[i].first != k) {
      ++i;
      continue;
    }
    *enqueued_status_[i].second = st;
    enqueued_status_[i] = enqueued_status_.back();
    enqueued_status_.pop_back();
  }
}

MPI_Status PRequest::round_status(int error) const {
  MPI_Status st{};
  st.MPI_SOURCE = peer_;
  st.MPI_TAG = tag_;
  st.MPI_ERROR = error;
  // In bytes: what MPI_Status_set_elements_x counts for a derived datatype differs between MPI
  // libraries (whole datatypes in MPICH 4.0, basic elements in Open MPI); for MPI_BYTE it does not.
  const MPI_Count n = side_ == Side::recv && error == MPI_SUCCESS && peer_ != MPI_PROC_NULL
                          ? static_cast<MPI_Count>(partitions_) * count_ * type_size_
                          : 0;
  MPI_Status_set_elements_x(&st, MPI_BYTE, n);
  MPI_Status_set_cancelled(&st, 0);
  return st;
}

}  // namespace mpix
