// PRequest, agent side, and the PartitionedEngine poller that runs it: the partition scheduler.
// It turns rounds into ops (core/op.hpp) the agent fires when their partition's word opens and
// the provider carries, and turns their completions into part / done words. Everything here
// runs on the agent thread, with the engine lock held.
#include "partitioned/prequest_engine.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/op.hpp"
#include "partitioned/prequest.hpp"
#include "partitioned/private_comms.hpp"

namespace mpix {

namespace {

// The agent has completed @p op: its status (and error) are final.
bool op_done(const Op &op) { return reached(load_signal(op.done.word), op.done_value); }

}  // namespace

bool PRequest::engine_header() {
  if (!header_op_ || !op_done(*header_op_)) return false;
  Op *op = header_op_;
  header_op_ = nullptr;
  const bool op_ok = op->status.MPI_ERROR == MPI_SUCCESS;
  if (!op_ok) {
    header_error_ = op->error;
  } else if (side_ == Side::recv) {
    if (header_[0] != kHeaderMagic || header_[1] < 0 || header_[2] < 0) {
      header_error_ = make_status(MPI_ERR_OTHER,
                                  "partitioned receive from %d tag %d matched a "
                                  "malformed header",
                                  peer_, tag_);
    } else {
      data_tag_base_ = static_cast<int>(header_[3]);
      header_error_ = PieceMap::build(header_[1], header_[2], partitions_,
                                      static_cast<int64_t>(count_) * type_size_, type_size_, &map_);
      if (!header_error_.is_ok() && header_[1] <= INT_MAX && header_[2] <= INT_MAX &&
          header_[1] * header_[2] <= PTRDIFF_MAX) {
        drain_parts_ = static_cast<int>(header_[1]);
        drain_bytes_ = static_cast<int>(header_[2]);
      }
    }
  }
  op_unref(op);
  if (side_ == Side::recv) {
    // Direct rounds: an offer is answered either way; without one the agents carry them.
    if (op_ok && header_[0] == kHeaderMagic && (header_[4] & 1)) engine_answer_offer();
    else direct_.store(kDirectNo, std::memory_order_release);
  }
  if (!header_error_.is_ok())
    MPIX_LOG(warn, "api", "partitioned %s %s %d tag %d: %s",
             side_ == Side::send ? "send" : "receive", side_ == Side::send ? "to" : "from", peer_,
             tag_, header_error_.what().c_str());
  header_known_ = true;
  return true;
}

void PRequest::engine_answer_offer() {
  const int64_t recv_bytes = static_cast<int64_t>(partitions_) * count_ * type_size_;
  const char *why = direct_answer_refusal(direct_refusal_, header_[1] * header_[2], recv_bytes);
  std::string text = why ? why : "";
  reply_ = DirectReply{};
  if (!why) {
    Status st = direct_reply_fill(be_, buf_, static_cast<uint64_t>(recv_bytes), slot_, words_->base,
                                  &reply_);
    if (!st.is_ok()) text = "exporting the receive buffer: " + st.what();
  }
  bool accept = text.empty();
  reply_.magic = kDirectReplyMagic;
  reply_.accept = accept ? 1 : 0;
  // An acceptance is decided by the sender's confirmation (it maps the memory first).
  if (accept) {
    Status st = start_op(false, &confirm_, 1, MPI_INT64_T, ctl_tag(true), pc_->ctl_ctx,
                         &kHeaderGate, 0, &confirm_op_);
    if (!st.is_ok()) {
      accept = false;
      reply_.accept = 0;
      text = "posting the receive of the sender's confirmation: " + st.what();
    }
  }
  Status st = start_op(true, &reply_, static_cast<int>(sizeof reply_), MPI_BYTE, ctl_tag(false),
                       pc_->ctl_ctx, &kHeaderGate, 0, &reply_op_);
  if (!st.is_ok())
    // The sender waits for this answer at its first wait: say why it will not come.
    MPIX_LOG(error, "api",
             "partitioned receive from %d tag %d: cannot answer the sender's offer of direct "
             "rounds (its first wait will not return): %s",
             peer_, tag_, st.what().c_str());
  if (!accept) {
    MPIX_LOG(info, "api", "partitioned receive from %d tag %d: the agents' path: %s", peer_, tag_,
             text.c_str());
    direct_.store(kDirectNo, std::memory_order_release);
    notifier().notify();
  }
}

bool PRequest::engine_reply() {
  if (!op_done(*reply_op_)) return false;
  Op *op = reply_op_;
  reply_op_ = nullptr;
  if (side_ == Side::send) {
    int d = kDirectNo;
    std::string why = "the receiver declined";
    if (op->status.MPI_ERROR != MPI_SUCCESS) {
      direct_error_ = op->error;
      d = kDirectFailed;
    } else if (reply_.magic != kDirectReplyMagic) {
      direct_error_ = make_status(MPI_ERR_OTHER,
                                  "partitioned send to %d tag %d: malformed answer to the offer "
                                  "of direct rounds",
                                  peer_, tag_);
      d = kDirectFailed;
    } else if (reply_.accept == 1) {
      const uint64_t bytes = static_cast<uint64_t>(partitions_) * count_ * type_size_;
      Status st = direct_map(reply_, be_, device_, bytes, &target_);
      d = st.is_ok() ? kDirectYes : kDirectNo;
      if (!st.is_ok()) why = "mapping the receiver's buffer: " + st.what();
      // The receiver decides on this: direct, or the agents' path (nothing was moved yet).
      confirm_ = d == kDirectYes ? 1 : 0;
      st = start_op(true, &confirm_, 1, MPI_INT64_T, ctl_tag(true), pc_->ctl_ctx, &kHeaderGate, 0,
                    &confirm_op_);
      if (!st.is_ok()) {
        direct_error_ = make_status(st.code(),
                                    "partitioned send to %d tag %d: cannot confirm direct "
                                    "rounds to the receiver (its rounds will not complete): %s",
                                    peer_, tag_, st.what().c_str());
        MPIX_LOG(error, "api", "%s", direct_error_.what().c_str());
        d = kDirectFailed;
      }
    }
    MPIX_LOG(info, "api", "partitioned send to %d tag %d: %s%s", peer_, tag_,
             d == kDirectYes  ? "direct rounds (one GPU-to-GPU copy per round, no host step)"
             : d == kDirectNo ? "the agents' path: "
                              : "direct rounds failed: ",
             d == kDirectYes  ? ""
             : d == kDirectNo ? why.c_str()
                              : direct_error_.what().c_str());
    direct_.store(d, std::memory_order_release);
    notifier().notify();
  }
  op_unref(op);
  return true;
}

bool PRequest::engine_confirm() {
  if (!op_done(*confirm_op_)) return false;
  Op *op = confirm_op_;
  confirm_op_ = nullptr;
  if (side_ == Side::recv) {
    const bool yes = op->status.MPI_ERROR == MPI_SUCCESS && confirm_ == 1;
    MPIX_LOG(info, "api", "partitioned receive from %d tag %d: %s", peer_, tag_,
             yes ? "direct rounds (one GPU-to-GPU copy per round, no host step)"
                 : "the agents' path (the sender could not map this buffer)");
    direct_.store(yes ? kDirectYes : kDirectNo, std::memory_order_release);
    notifier().notify();
  }
  op_unref(op);
  return true;
}

bool PRequest::engine_open_round(uint64_t k) {
  const uint64_t R = words_->R(k);
  // The round starts when the host or the stream wrote R-1; a receive also needs its header.
  if (!reached(load_signal(words_->round.word), R - 1)) return false;
  if (!header_known_) return false;
  round_error_ = MPI_SUCCESS;
  round_error_text_.clear();
  pieces_left_ = 0;
  draining_ = false;
  open_ = true;
  host_steps_.fetch_add(1, std::memory_order_relaxed);
  if (peer_ == MPI_PROC_NULL) {
    if (side_ == Side::recv)
      for (const SignalWord &w : words_->part) store_signal(w.word, R);
    return true;
  }
  auto failed = [this](const Status &st) {
    if (round_error_ != MPI_SUCCESS) return;
    round_error_ = st.code();
    round_error_text_ = st.what();
  };
  if (side_ == Side::send) {
    // One message per partition, fired by the agent once the partition's word reaches R.
    piece_ops_.assign(static_cast<std::size_t>(partitions_), nullptr);
    for (int i = 0; i < partitions_; ++i) {
      Status st = start_op(true, buf_ + static_cast<MPI_Aint>(i) * count_ * extent_, count_, dt_,
                           data_tag_base_ + i, pc_->data_ctx, words_->part[i].word, R,
                           &piece_ops_[static_cast<std::size_t>(i)]);
      if (st.is_ok()) ++pieces_left_;
      else failed(st);
    }
    return true;
  }
  if (!header_error_.is_ok()) {
    round_error_ = header_error_.code();
    round_error_text_ = header_error_.what();
    // Completes with the error once the sender's partitions have been taken and dropped (at
    // once if the header itself could not be read).
    if (drain_parts_ > 0) engine_post_drains(R);
    return true;
  }
  const std::size_t n = map_.pieces.size();
  piece_ops_.assign(n, nullptr);
  remaining_ = map_.pieces_of;
  for (std::size_t j = 0; j < remaining_.size(); ++j)
    if (remaining_[j] == 0) store_signal(words_->part[j].word, R);  // no bytes: arrived
  // The round word reached R-1 already: the agent posts these at once.
  for (std::size_t i = 0; i < n; ++i) {
    const PieceMap::Piece &p = map_.pieces[i];
    Status st = start_op(false, buf_ + p.elem_offset * extent_, p.count, dt_,
                         data_tag_base_ + static_cast<int>(i), pc_->data_ctx, words_->round.word,
                         R - 1, &piece_ops_[i]);
    if (st.is_ok()) ++pieces_left_;
    else failed(st);
  }
  return true;
}

void PRequest::engine_post_drains(uint64_t R) {
  draining_ = true;
  const std::size_t bytes = static_cast<std::size_t>(drain_bytes_);
  if (drain_buf_.empty()) drain_buf_.resize(std::max<std::size_t>(1, bytes * drain_parts_));
  piece_ops_.assign(static_cast<std::size_t>(drain_parts_), nullptr);
  for (int i = 0; i < drain_parts_; ++i) {
    // MPI_BYTE: only the bytes matter, the data is dropped.
    Status st = start_op(false, drain_buf_.data() + bytes * static_cast<std::size_t>(i),
                         drain_bytes_, MPI_BYTE, data_tag_base_ + i, pc_->data_ctx,
                         words_->round.word, R - 1, &piece_ops_[static_cast<std::size_t>(i)]);
    if (st.is_ok()) ++pieces_left_;
    else
      MPIX_LOG(warn, "api",
               "partitioned receive from %d tag %d: could not take the sender's "
               "partition %d after the size mismatch: %s",
               peer_, tag_, i, st.what().c_str());
  }
}

bool PRequest::engine_test_pieces(uint64_t k) {
  const uint64_t R = words_->R(k);
  bool any = false;
  for (std::size_t i = 0; i < piece_ops_.size(); ++i) {
    Op *op = piece_ops_[i];
    if (!op || !op_done(*op)) continue;
    piece_ops_[i] = nullptr;
    --pieces_left_;
    any = true;
    if (op->status.MPI_ERROR != MPI_SUCCESS) {
      if (round_error_ == MPI_SUCCESS) {
        round_error_ = op->error.code();
        round_error_text_ = op->error.what();
      }
    } else if (side_ == Side::recv && !draining_) {
      const PieceMap::Piece &p = map_.pieces[i];
      for (int j = p.first_part; j <= p.last_part; ++j)
        if (--remaining_[static_cast<std::size_t>(j)] == 0)
          store_signal(words_->part[static_cast<std::size_t>(j)].word, R);
    }
    op_unref(op);
  }
  return any;
}

bool PRequest::engine_reap_orphans() {
  bool any = false;
  for (std::size_t i = 0; i < orphans_.size();) {
    if (!op_done(*orphans_[i])) {
      ++i;
      continue;
    }
    op_unref(orphans_[i]);
    orphans_[i] = orphans_.back();
    orphans_.pop_back();
    any = true;
  }
  return any;
}

void PRequest::engine_complete_round(uint64_t k) {
  set_round_status(k, round_error_);
  piece_ops_.clear();
  open_ = false;
  eng_completed_ = k;
  store_signal(words_->done.word, words_->R(k));
  notifier().notify();
}

void PRequest::engine_cancel() {
  // A message the agent has not fired is completed without being posted; one the provider
  // has stays with it (no provider can take a posted message back) until it completes.
  for (Op *op : piece_ops_) {
    if (!op) continue;
    if (op->state.load(std::memory_order_relaxed) == OpState::armed)
      op_fail(*op, make_status(MPI_ERR_REQUEST, "the round was abandoned after a device misuse"));
    orphans_.push_back(op);
  }
  piece_ops_.clear();
  open_ = false;
  eng_completed_ = current_round();
  // Releases any stream still waiting for the abandoned round (values only grow).
  store_signal(words_->done.word, words_->R(eng_completed_));
  cancel_.store(false);
  notifier().notify();
}

bool PRequest::progress() {
  bool any = engine_header();
  if (reply_op_) any |= engine_reply();
  if (confirm_op_) any |= engine_confirm();
  if (!orphans_.empty()) any |= engine_reap_orphans();
  if (cancel_.load()) {
    engine_cancel();
    return true;
  }
  switch (direct_.load(std::memory_order_acquire)) {
    case kDirectUnknown:  // the path is chosen before any round opens
      return any;
    case kDirectYes:
    case kDirectFailed:
      // The streams (or the host) carry every round: nothing for the agent.
      eng_completed_ = current_round();
      return any;
    default:
      break;
  }
  while (eng_completed_ < current_round()) {
    const uint64_t k = eng_completed_ + 1;
    if (!open_) {
      if (!engine_open_round(k)) break;
      any = true;
    }
    any |= engine_test_pieces(k);
    if (pieces_left_ > 0) break;
    engine_complete_round(k);
    any = true;
  }
  return any;
}

bool PRequest::engine_idle() const {
  if (eng_completed_ != current_round() || !orphans_.empty() || reply_op_ || confirm_op_)
    return false;
  // A freed request also waits until its stream has written its last round mark (the words
  // go back to the pool after that, never while a stream may still write them), and until its
  // header op is complete (the op points into the request).
  return !freed_ ||
         (!header_op_ && reached(load_signal(words_->round.word), words_->R(eng_completed_)));
}

bool PRequest::engine_nothing_to_do() const {
  const int d = direct_.load(std::memory_order_acquire);
  return (d == kDirectYes || d == kDirectFailed) && !header_op_ && !reply_op_ && !confirm_op_ &&
         orphans_.empty() && !cancel_.load() && !freed_;
}

void PartitionedEngine::ensure_registered() {
  std::call_once(registered_, [this] {
    Status st = agent_add_poller(this);
    if (!st.is_ok())
      MPIX_LOG(error, "agent", "partitioned engine: cannot start the agent: %s", st.what().c_str());
  });
}

void PartitionedEngine::activate(const std::shared_ptr<PRequest> &r) {
  ensure_registered();
  {
    std::lock_guard<std::mutex> lk(mu_);
    r->started_.fetch_add(1, std::memory_order_acq_rel);
    if (!r->in_engine_ && r->engine_nothing_to_do()) {
      // A direct round: the streams carry it. No list entry and no wake-up (a futex call
      // where the agent sleeps), twice an iteration in a halo of partitioned requests.
      r->eng_completed_ = r->current_round();
      return;
    }
    if (!r->in_engine_) {
      r->in_engine_ = true;
      list_.push_back(r);
      count_.store(list_.size());
    }
  }
  notifier().notify();
}

void PartitionedEngine::release(const std::shared_ptr<PRequest> &r) {
  std::lock_guard<std::mutex> lk(mu_);
  r->freed_ = true;
  if (r->in_engine_ || r->engine_idle()) return;
  r->in_engine_ = true;  // its stream has not written the last round mark yet
  list_.push_back(r);
  count_.store(list_.size());
}

bool PartitionedEngine::poll() {
  std::vector<std::shared_ptr<PRequest>> dropped;  // destroyed after the lock is released
  bool any = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (std::size_t i = 0; i < list_.size();) {
      PRequest &r = *list_[i];
      any |= r.progress();
      if (r.engine_idle() && !r.cancel_.load()) {
        r.in_engine_ = false;
        dropped.push_back(std::move(list_[i]));
        list_[i] = std::move(list_.back());
        list_.pop_back();
        continue;
      }
      ++i;
    }
    count_.store(list_.size());
  }
  return any;
}

PartitionedEngine::~PartitionedEngine() {
  agent_remove_poller(this);  // the agent has stopped by now (~Runtime); this states the order
  // Requests still in rounds are left alive, as the Runtime leaves ops never retired: their
  // teardown calls MPI, and a stream may still wait on their words.
  for (auto &r : list_) runtime_keep_forever(std::move(r));
}

PartitionedEngine &partitioned_engine() { return runtime().part<PartitionedEngine>(); }

}  // namespace mpix
