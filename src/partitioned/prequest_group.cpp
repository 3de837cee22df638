// Partitioned requests started, marked ready and waited for in stream order (MPIX_Start_enqueue,
// MPIX_Pready_enqueue and MPIX_Pwait_enqueue: a group of one; MPIX_Startall_enqueue,
// MPIX_Pwaitall_enqueue): where every request is on one stream, ONE stream call carries all of
// their operations. Each stream call costs the host microseconds (a driver call on a GPU stream);
// a halo exchange's send and receive otherwise pay two at its start and two at its wait.
// Requests on different streams are started / waited for one after another, in order.
#include <algorithm>
#include <mutex>
#include <vector>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/enqueue.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "partitioned/device_request.hpp"
#include "partitioned/prequest.hpp"

namespace mpix {
namespace {

// Locks of several requests, taken in address order (every caller agrees on it), released in
// reverse.
class LockAll {
 public:
  explicit LockAll(std::vector<std::mutex *> mus) : mus_(std::move(mus)) {
    std::sort(mus_.begin(), mus_.end());
    for (std::mutex *m : mus_) m->lock();
  }
  ~LockAll() {
    for (auto it = mus_.rbegin(); it != mus_.rend(); ++it) (*it)->unlock();
  }
  LockAll(const LockAll &) = delete;
  LockAll &operator=(const LockAll &) = delete;

 private:
  std::vector<std::mutex *> mus_;
};

}  // namespace

Status PRequest::one_stream(const std::vector<std::shared_ptr<PRequest>> &rs, bool *yes) {
  *yes = false;
  std::vector<const PRequest *> seen;
  seen.reserve(rs.size());
  for (const auto &r : rs) seen.push_back(r.get());
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
    return make_status(MPI_ERR_REQUEST, "array_of_requests names one request twice");
  if (rs.size() < 2) return {};
  for (const auto &r : rs)
    if (!r->ctx_ || !r->ctx_->stream || r->ctx_->stream != rs[0]->ctx_->stream) return {};
  *yes = true;
  return {};
}

Status PRequest::enqueue_starts(const std::vector<PRequest *> &rs) {
  ExecStream *ex = nullptr;
  FutexLock *order = nullptr;
  MPIX_TRY(rs[0]->stream_of_comm(&ex, &order));
  std::vector<StreamMemOp> ops;
  std::vector<char> tell(rs.size(), 0);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    bool t = false;
    rs[i]->start_ops(&ops, &t);
    tell[i] = t;
  }
  {
    std::lock_guard<FutexLock> slk(*order);
    MPIX_TRY(ops.size() == 1 ? ex->write_value(ops[0].word, ops[0].value)
                             : ex->batch(ops.data(), ops.size()));
  }
  for (std::size_t i = 0; i < rs.size(); ++i) rs[i]->mark_started(tell[i] != 0);
  return {};
}

Status PRequest::enqueue_waits(const std::vector<PRequest *> &rs,
                               const std::vector<MPI_Status *> &statuses) {
  ExecStream *ex = nullptr;
  FutexLock *order = nullptr;
  MPIX_TRY(rs[0]->stream_of_comm(&ex, &order));
  std::lock_guard<FutexLock> slk(*order);
  // The stream's deferred trigger first (ops before these waits must be able to fire), then
  // each request's waits and writes.
  Stream *stream = rs[0]->ctx_->stream.get();
  // Deferred copies out must run before that trigger: then a kernel writes both first.
  if (stream->deferred_copies()) MPIX_TRY(flush_deferred_trigger(*stream, *ex));
  std::vector<StreamMemOp> ops{{StreamMemOp::write, stream->trigger_word(), 0}};
  for (std::size_t i = 0; i < rs.size(); ++i) MPIX_TRY(rs[i]->pwait_ops(statuses[i], &ops));
  ops[0].value = stream->take_deferred();
  MPIX_TRY(ops[0].value ? ex->batch(ops.data(), ops.size())
                        : ex->batch(ops.data() + 1, ops.size() - 1));
  Status first;
  for (PRequest *r : rs) {
    Status st = r->mark_waited();
    if (first.is_ok()) first = st;
  }
  return first;
}

std::vector<PRequest *> PRequest::raw_and_mutexes(const std::vector<std::shared_ptr<PRequest>> &rs,
                                                  std::vector<std::mutex *> *mus) {
  std::vector<PRequest *> raw;
  for (const auto &r : rs) {
    mus->push_back(&r->mu_);
    raw.push_back(r.get());
  }
  return raw;
}

Status PRequest::start_enqueue_all(const std::vector<std::shared_ptr<PRequest>> &rs) {
  bool together = false;
  MPIX_TRY(one_stream(rs, &together));
  if (!together) {
    for (const auto &r : rs) MPIX_TRY(r->start(true));
    return {};
  }
  std::vector<std::mutex *> mus;
  const std::vector<PRequest *> raw = raw_and_mutexes(rs, &mus);
  LockAll locks(std::move(mus));
  for (const auto &r : rs) MPIX_TRY(r->check_start(true));
  return enqueue_starts(raw);
}

Status PRequest::pready_enqueue(const int *parts, int n) {
  if (side_ != Side::send)
    return make_status(MPI_ERR_REQUEST, "MPIX_Pready_enqueue on a partitioned receive request");
  // Once: device marks for the direct rounds to wait for (before mu_, which it takes). Without
  // them a direct round's copy polls the host words across PCIe (session 35, one H100: 20-22 us
  // one way for small rounds against 15-17 with a kernel's device marks). A failure leaves the
  // host words, which work everywhere.
  if (!stream_marks_checked_.exchange(true)) {
    Status st = device_marks_for_stream(shared_from_this());
    if (!st.is_ok())
      MPIX_LOG(info, "api", "MPIX_Pready_enqueue: no device marks (%s); host words",
               st.what().c_str());
  }
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_)
    return make_status(MPI_ERR_REQUEST, "request is not active (MPIX_Start_enqueue it first)");
  ExecStream *ex = nullptr;
  FutexLock *order = nullptr;
  MPIX_TRY(stream_of_comm(&ex, &order));
  const uint64_t R = words_->R(current_round());
  MPIX_TRY(check_marks(parts, n, R));
  // As MPIX_Pready: the device marks first (a direct round may wait for them), then the host
  // words (the agents' path, and direct rounds without device marks, wait for those).
  std::vector<StreamMemOp> ops;
  ops.reserve(static_cast<std::size_t>(n) * (words_->dmarks ? 2 : 1));
  if (words_->dmarks)
    for (int i = 0; i < n; ++i)
      ops.push_back(StreamMemOp{StreamMemOp::write, words_->dmarks + parts[i], R, true});
  for (int i = 0; i < n; ++i)
    ops.push_back(StreamMemOp{StreamMemOp::write, words_->part[parts[i]].word, R});
  {
    std::lock_guard<FutexLock> slk(*order);
    MPIX_TRY(ops.size() == 1 ? ex->write_value(ops[0].word, ops[0].value)
                             : ex->batch(ops.data(), ops.size()));
  }
  if (enq_marks_.empty()) enq_marks_.assign(static_cast<std::size_t>(partitions_), 0);
  for (int i = 0; i < n; ++i) enq_marks_[static_cast<std::size_t>(parts[i])] = R;
  return {};
}

Status PRequest::pwait_enqueue_all(const std::vector<std::shared_ptr<PRequest>> &rs,
                                   const std::vector<MPI_Status *> &statuses) {
  bool together = false;
  MPIX_TRY(one_stream(rs, &together));
  if (!together) {
    for (std::size_t i = 0; i < rs.size(); ++i) MPIX_TRY(rs[i]->pwait_enqueue(statuses[i]));
    return {};
  }
  for (const auto &r : rs) MPIX_TRY(r->pwait_path_known());
  std::vector<std::mutex *> mus;
  const std::vector<PRequest *> raw = raw_and_mutexes(rs, &mus);
  LockAll locks(std::move(mus));
  // Every request active before any wait is enqueued (a direct send's copy starts from there).
  for (const auto &r : rs)
    if (!r->active_)
      return make_status(MPI_ERR_REQUEST, "a request is not active (nothing to wait for)");
  return enqueue_waits(raw, statuses);
}

}  // namespace mpix
