#include "providers/mpi/mpi_provider.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/op.hpp"
#include "core/stream.hpp"
#include "providers/providers_settings.hpp"

namespace mpix {
namespace {

// A send of at most kEagerBytes completes without its receive, so holding it back behind
// others can never wait for the peer.
constexpr MPI_Count kSmallSendBytes = static_cast<MPI_Count>(kEagerBytes);

// Bytes of @p op's message (-1 where the type has no size).
MPI_Count message_bytes(const Op &op) {
  MPI_Count sz = 0;
  if (MPI_Type_size_x(op.dt, &sz) != MPI_SUCCESS || sz == MPI_UNDEFINED) return -1;
  return sz * op.count;
}

bool is_small_send(const Op &op) {
  if (op.kind != OpKind::send) return false;
  const MPI_Count n = message_bytes(op);
  return n >= 0 && n <= kSmallSendBytes;
}

const char *what_of(const Op &op) {
  return op.kind == OpKind::send   ? "send to"
         : op.kind == OpKind::recv ? "receive from"
                                   : "allreduce on";
}

}  // namespace

DeviceRead MpiProvider::reads_device(const Op &op) {
  const auto *mc = provider_comm<MpiComm>(op);
  return mc ? ipc_send_read(op, mc->ipc.get()) : DeviceRead::no;
}

bool MpiProvider::may_deliver_device(const Op &op) {
  const auto *mc = provider_comm<MpiComm>(op);
  return mc && ipc_may_receive_direct(op, mc->ipc.get());
}

bool MpiProvider::direct_waits_for_receive(uint64_t bytes) { return bytes > ipc_eager_max(); }

bool MpiProvider::may_announce(const Op &op, const ExecStream &ex, const IpcShared &ipc) const {
  // A stream whose triggers are host functions is not announced, nor is a send to a peer whose
  // stream's are (ipc_may_announce): gpu_pipeline_hostfn hangs with its sends announced
  // (sessions 33-34, H200 and H100: the sending stream never reaches a send's trigger; the
  // cause not proven — docs/results-gpu.md, session 34, has the leads).
  if (!announce_ || ex.trigger_mode() == TriggerMode::hostfn || !ipc.announces_to(op.peer))
    return false;
  if (ipc_announce_mode() != AnnounceMode::adaptive) return true;
  // A peer whose agent copied the last announced sends gets unannounced ones for a while.
  const AnnouncePolicy *pol = ipc.policy(op.peer);
  if (pol && !pol->arms()) return false;
  // Where the receiving stream copies with its fused kernel (up to 64 KiB) announcing cost
  // 0.3-1.1 us one way (session 33, one H200): only larger sends are.
  int size = 0;
  return MPI_Type_size(op.dt, &size) == MPI_SUCCESS &&
         static_cast<uint64_t>(size) * static_cast<uint64_t>(op.count) > AnnouncePolicy::kMinBytes;
}

Status MpiProvider::arm(Op &op, ExecStream *ex, FireRecipe *fire) {
  // Only a GPU-direct send (reads_device found one: ipc_send_read) may be announced (one that
  // reads device memory as it is) or completed on the GPU (also one read from the stream's
  // device copy: a buffer where a freed one lay); every other op leaves at the first tests (a
  // host stream's sends skipped ~70 instructions of lookups when they came later). Called only
  // with either on (arms_ops_).
  // (op.stager first: host-stream ops have none, and leave without a call.)
  const bool device_copy = !op.device_as_is && op.stager && op_staged_on_device(op);
  if ((!op.device_as_is && !device_copy) || !fire || op.kind != OpKind::send || !op.stream ||
      op.prov || fire->word != op.stream->trigger_word() || !ex)
    return {};
  const auto *mc = provider_comm<MpiComm>(op);
  if (!mc || !mc->ipc) return {};
  const bool gate = !device_copy && may_announce(op, *ex, *mc->ipc);
  // A word the receiver's copy kernel sets once it has read the message, which this stream's
  // waits in kernels go on at (ipc_path.hpp, "Completion on the GPU"): in the stream's device
  // memory, so only where the stream is on the communicator's device.
  const bool done = gpu_completion_ && ex->waits_either() && ex->device() == mc->ipc->device;
  if (!gate && !done) return {};
  auto e = std::make_unique<IpcEarly>();
  Status st = ready_word_take(mc->ipc->backend, mc->ipc->device, &e->ready);
  if (!st.is_ok()) {  // the send goes the usual way
    MPIX_LOG(warn, "mpi", "GPU-direct: no ready word for a send (%s)", st.what().c_str());
    return {};
  }
  e->gate = gate;
  e->done = done;
  if (gate) {
    fire->ready = e->ready.word;
    fire->ready_value = e->ready.value;
  }
  if (done) {
    op.peer_done = e->ready.word;
    op.peer_done_value = e->ready.value + 1;
  }
  op.prov = e.release();
  return {};
}

void MpiProvider::take(Op &op) {
  // Without announcements no send is counted (fired_or_dropped does the same).
  if (!announce_ || op.kind != OpKind::send) return;
  auto *e = static_cast<IpcEarly *>(op.prov);
  const auto key = std::make_pair(op.comm, op.peer);
  // Under auto every GPU-direct send to the peer counts its policy's pause down, armed or not.
  AnnouncePolicy *pol = op.device_as_is && ipc_announce_mode() == AnnounceMode::adaptive
                            ? announce_policy(op)
                            : nullptr;
  const bool may = !pol || pol->taken();
  if (e && e->gate && may && held_.empty() && unfired_.find(key) == unfired_.end()) {
    Status st = chunks_.announce(op);
    if (st.is_ok()) {
      e->announced = true;
      return;
    }
    MPIX_LOG(warn, "mpi", "GPU-direct: announcing a send to %d failed (%s); it goes unannounced",
             op.peer, st.what().c_str());
  }
  ++unfired_[key];
}

AnnouncePolicy *MpiProvider::announce_policy(const Op &op) {
  const auto *mc = provider_comm<MpiComm>(op);
  return mc && mc->ipc ? mc->ipc->policy(op.peer) : nullptr;
}

void MpiProvider::fired_or_dropped(const Op &op) {
  if (!announce_ || op.kind != OpKind::send) return;
  const auto *e = static_cast<const IpcEarly *>(op.prov);
  if (e && e->announced) return;
  auto it = unfired_.find(std::make_pair(op.comm, op.peer));
  if (it != unfired_.end() && --it->second <= 0) unfired_.erase(it);
}

void MpiProvider::disarm(Op &op) {
  fired_or_dropped(op);
  chunks_.drop(op);
}

Status MpiProvider::fire(Op &op) {
  fired_or_dropped(op);
  if (ChunkEngine::takes(op)) return chunks_.fire(op);
  if (timeout_s_ < 0) timeout_s_ = setting_long(ProvidersSetting::timeout);
  const Clock::time_point now = timeout_s_ > 0 ? Clock::now() : Clock::time_point{};
  if (op.kind == OpKind::send) {
    const bool small = is_small_send(op);
    // Every send behind a held one waits too: sends are posted in stream order, so that MPI's
    // non-overtaking order holds for each communicator, peer and tag.
    if (!held_.empty() || (small && small_sends_ >= kMaxSmallSends)) {
      held_.push_back({&op, now});
      return {};
    }
    return post(op, small, now);
  }
  return post(op, false, now);
}

Status MpiProvider::post(Op &op, bool small, Clock::time_point since) {
  MPI_Request r = MPI_REQUEST_NULL;
  switch (op.kind) {
    case OpKind::send:
      MPIX_MPI_CHECK(MPI_Isend(op.sbuf, op.count, op.dt, op.peer, op.tag, op.comm, &r));
      break;
    case OpKind::recv:
      MPIX_MPI_CHECK(MPI_Irecv(op.rbuf, op.count, op.dt, op.peer, op.tag, op.comm, &r));
      break;
    case OpKind::allreduce:
      MPIX_MPI_CHECK(MPI_Iallreduce(op.sbuf, op.rbuf, op.count, op.dt, op.reduce_op, op.comm, &r));
      break;
  }
  op_posted(op);
  // A message past the eager limit moves only while both ranks call MPI (busy()).
  const bool large = op.kind != OpKind::allreduce && message_bytes(op) > kSmallSendBytes;
  posted_.push_back(&op);
  reqs_.push_back(r);
  flags_.push_back(static_cast<char>((small ? kSmallFlag : 0) | (large ? kLargeFlag : 0)));
  if (large) ++large_posted_;
  since_.push_back(since);
  cancelling_.push_back(0);
  unseen_ = posted_.size();
  if (small) ++small_sends_;
  return {};
}

// Held sends, in order, as far as the cap on small sends in flight allows. A send larger than
// the cap's sends is posted at once when it reaches the front.
bool MpiProvider::post_held(std::vector<Op *> &done) {
  bool any = false;
  while (!held_.empty()) {
    Op *op = held_.front().op;
    const Clock::time_point since = held_.front().since;
    const bool small = is_small_send(*op);
    if (small && small_sends_ >= kMaxSmallSends) break;
    held_.pop_front();
    any = true;
    Status st = post(*op, small, since);
    if (!st.is_ok()) {
      op_failed(*op, std::move(st));
      done.push_back(op);
    }
  }
  return any;
}

void MpiProvider::forget(std::size_t i) {
  if (flags_[i] & kSmallFlag) --small_sends_;
  if (flags_[i] & kLargeFlag) --large_posted_;
}

bool MpiProvider::busy() const { return !posted_.empty() || !held_.empty() || chunks_.busy(); }

bool MpiProvider::large_in_flight() const { return large_posted_ > 0 || chunks_.busy(); }

void MpiProvider::compact() {
  std::size_t w = 0, cursor = 0;
  for (std::size_t i = 0; i < posted_.size(); ++i) {
    if (i == cursor_) cursor = w;
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    posted_[w] = posted_[i];
    reqs_[w] = reqs_[i];
    flags_[w] = flags_[i];
    since_[w] = since_[i];
    cancelling_[w] = cancelling_[i];
    ++w;
  }
  posted_.resize(w);
  reqs_.resize(w);
  flags_.resize(w);
  since_.resize(w);
  cancelling_.resize(w);
  holes_ = 0;
  first_ = 0;
  cursor_ = cursor;  // the window goes on where it was (gather() wraps it if past the end)
}

void MpiProvider::gather() {
  test_slots_.clear();
  test_reqs_.clear();
  const std::size_t n = posted_.size();
  auto take = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i)
      if (reqs_[i] != MPI_REQUEST_NULL) {
        test_slots_.push_back(i);
        test_reqs_.push_back(reqs_[i]);
      }
  };
  const std::size_t head_end = std::min(n, first_ + kHead);
  take(first_, head_end);
  if (head_end < n) {
    if (cursor_ < head_end || cursor_ >= n) cursor_ = head_end;
    const std::size_t end = std::min(n, cursor_ + kWindow);
    take(cursor_, end);
    unseen_ -= std::min(unseen_, end - cursor_);
    cursor_ = end;
  } else {
    unseen_ = 0;
  }
  indices_.resize(test_reqs_.size());
  statuses_.resize(test_reqs_.size());
}

namespace {

Status timeout_error(long s) {
  return make_status(MPI_ERR_OTHER,
                     "no completion within MPIX_TIMEOUT=%ld s (has the peer failed?)", s);
}

}  // namespace

// How long a receive cancelled at its timeout may take to come back cancelled before it is
// given up on.
constexpr std::chrono::milliseconds kCancelGrace(200);

void MpiProvider::check_timeouts(std::vector<Op *> &done) {
  const Clock::time_point now = Clock::now();
  if (now - last_check_ < std::chrono::milliseconds(50)) return;
  last_check_ = now;
  const auto limit = std::chrono::seconds(timeout_s_);
  bool dropped = false;
  for (std::size_t i = 0; i < posted_.size(); ++i) {
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    Op *op = posted_[i];
    if (cancelling_[i]) {
      // A receive not yet matched comes back cancelled at once. One that MPI_Cancel cannot take
      // back (matched, its data stalled with the peer) is given up on like a send.
      if (now - since_[i] < kCancelGrace) continue;
    } else {
      if (now - since_[i] < limit) continue;
      MPIX_LOG(error, "mpi",
               "%s rank %d (tag %d) got no completion for MPIX_TIMEOUT=%ld s; failing it",
               what_of(*op), op->peer, op->tag, timeout_s_);
      if (op->kind == OpKind::recv && MPI_Cancel(&reqs_[i]) == MPI_SUCCESS) {
        // Completes through MPI_Testsome: cancelled, or matched meanwhile (then as usual).
        cancelling_[i] = 1;
        since_[i] = now;
        continue;
      }
    }
    // A send, a reduction or a matched receive cannot be taken back: MPI keeps its request
    // until it finishes (it may still read or write the buffer then).
    orphans_.push_back(reqs_[i]);
    reqs_[i] = MPI_REQUEST_NULL;
    forget(i);
    op_failed(*op, timeout_error(timeout_s_));
    done.push_back(op);
    dropped = true;
  }
  if (dropped) compact();
  // Held sends: the FIFO is in the order the stream reached them, oldest first.
  while (!held_.empty() && now - held_.front().since >= limit) {
    Op *op = held_.front().op;
    held_.pop_front();
    MPIX_LOG(error, "mpi", "send to rank %d (tag %d) could not be posted within MPIX_TIMEOUT=%ld s",
             op->peer, op->tag, timeout_s_);
    op_failed(*op, timeout_error(timeout_s_));
    done.push_back(op);
  }
}

bool MpiProvider::test_orphans() {
  int n = static_cast<int>(orphans_.size()), outcount = 0;
  indices_.resize(n);
  MPI_Testsome(n, orphans_.data(), &outcount, indices_.data(), MPI_STATUSES_IGNORE);
  if (outcount == MPI_UNDEFINED || outcount == 0) return false;
  std::size_t w = 0;
  for (MPI_Request r : orphans_)
    if (r != MPI_REQUEST_NULL) orphans_[w++] = r;
  orphans_.resize(w);
  return true;
}

void MpiProvider::shutdown() {
  // Requests of ops failed by MPIX_TIMEOUT that MPI never finished (a peer that never took a
  // send, a receive whose data stalled): MPI may finish or drop them; mpix lets go.
  for (MPI_Request &r : orphans_) MPI_Request_free(&r);
  orphans_.clear();
}

bool MpiProvider::progress(std::vector<Op *> &done) {
  bool any = chunks_.busy() && chunks_.progress(done);
  if (!orphans_.empty()) any |= test_orphans();
  if (timeout_s_ > 0 && (!posted_.empty() || !held_.empty())) check_timeouts(done);
  if (posted_.empty()) return post_held(done) || any;
  // Copies of this loop's requests: MPI_Testsome frees the completed ones and nulls the copies;
  // their entries are nulled below.
  gather();
  int outcount = 0;
  int rc = MPI_Testsome(static_cast<int>(test_reqs_.size()), test_reqs_.data(), &outcount,
                        indices_.data(), statuses_.data());
  // Open MPI 4.1's Testsome, finding nothing done, runs progress and returns without looking
  // again, so a completion is seen one loop late; testing the head again here did not lower the
  // host-stream ping-pong latency (measured on 2 cores), so it is not done.
  if (outcount == MPI_UNDEFINED || outcount == 0) return post_held(done) || any || unseen_ > 0;
  unseen_ = posted_.size();
  for (int i = 0; i < outcount; ++i) {
    const std::size_t slot = test_slots_[indices_[i]];
    // MPI frees a completed request (an erroneous one included); should it not have, MPI keeps
    // it as an orphan's while the op is done here, once.
    if (test_reqs_[indices_[i]] != MPI_REQUEST_NULL) orphans_.push_back(test_reqs_[indices_[i]]);
    reqs_[slot] = MPI_REQUEST_NULL;
    ++holes_;
    Op *op = posted_[slot];
    forget(slot);
    // MPI_Testsome sets MPI_ERROR only when it returns MPI_ERR_IN_STATUS.
    if (rc != MPI_ERR_IN_STATUS) statuses_[i].MPI_ERROR = MPI_SUCCESS;
    // MPI's empty status for a receive from MPI_PROC_NULL, which MPICH 4.0 does not fill in
    // (it reports source 0, tag 0).
    if (op->kind == OpKind::recv && op->peer == MPI_PROC_NULL &&
        statuses_[i].MPI_ERROR == MPI_SUCCESS) {
      statuses_[i].MPI_SOURCE = MPI_PROC_NULL;
      statuses_[i].MPI_TAG = MPI_ANY_TAG;
      MPI_Status_set_elements_x(&statuses_[i], MPI_BYTE, 0);
    }
    int cancelled = 0;
    if (cancelling_[slot] && MPI_Test_cancelled(&statuses_[i], &cancelled) == MPI_SUCCESS &&
        cancelled)
      op_failed(*op, timeout_error(timeout_s_));
    else op_completed(*op, statuses_[i]);
    done.push_back(op);
  }
  while (first_ < posted_.size() && reqs_[first_] == MPI_REQUEST_NULL) ++first_;
  // Squeezed out once half the array (so in O(1) per completion); order kept.
  if (holes_ * 2 >= posted_.size()) compact();
  post_held(done);
  return true;
}

std::string MpiProvider::describe() const {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string s(lib, static_cast<std::size_t>(len));
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return "mpi: MPI_Isend/MPI_Irecv posted by the agent over " + s;
}

std::unique_ptr<Provider> make_mpi_provider() { return std::make_unique<MpiProvider>(); }

}  // namespace mpix
