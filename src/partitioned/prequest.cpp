// PRequest, host side: init and the calls of the MPI-4 partitioned API (the agent side is in
// prequest_engine.cpp).
#include "partitioned/prequest.hpp"

#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "api/api_settings.hpp"
#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/comm_ctx.hpp"
#include "core/mpi_status.hpp"
#include "core/op.hpp"
#include "core/op_create.hpp"
#include "core/provider.hpp"
#include "core/runtime.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "mpix/mpix_device.h"
#include "partitioned/direct_link.hpp"
#include "partitioned/prequest_engine.hpp"
#include "partitioned/private_comms.hpp"
#include "partitioned/round_mirror.hpp"

namespace mpix {
namespace {

// What stages @p buf: the GPU backend that sees device or managed memory at the first byte the
// datatype touches (with a positive true lower bound the buffer argument may lie outside the
// allocation), else the host's (which stages host buffers only under MPIX_STAGING_HOST).
Status buffer_backend(const void *buf, MPI_Datatype dt, Backend **out) {
  MPI_Count tlb = 0, text = 0;
  MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(dt, &tlb, &text));
  const void *first = static_cast<const char *>(buf) + tlb;
  for (StreamKind k : {StreamKind::cuda, StreamKind::hip}) {
    Backend *be = nullptr;
    if (!buf || !backend_get(k, &be).is_ok()) continue;
    const MemKind mk = be->classify(first);
    if (mk == MemKind::device || mk == MemKind::managed) {
      *out = be;
      return {};
    }
  }
  return backend_get(StreamKind::host, out);
}

}  // namespace

// Headers go in the order their requests were made: MPI-4 matches the k-th partitioned send
// to a peer and tag with the k-th partitioned receive there. All wait on this one word, always
// open, so the agent keeps them in one list, in submission order, and fires them in that order
// (ops on different words fire in no particular order). Answers to offers of direct rounds
// wait on it too.
const uint64_t kHeaderGate = 0;

PWords::PWords(int partitions) {
  SignalPool &pool = signal_pool();
  round = pool.acquire();
  done = pool.acquire();
  error = pool.acquire();
  part.reserve(static_cast<std::size_t>(partitions));
  for (int i = 0; i < partitions; ++i) part.push_back(pool.acquire());
  // Recycled words hold old values; number rounds above all of them (values only grow).
  uint64_t top = 0;
  auto see = [&top](const SignalWord &w) {
    uint64_t v = load_signal(w.word);
    if (static_cast<int64_t>(v - top) > 0) top = v;
  };
  see(round);
  see(done);
  see(error);
  for (const SignalWord &w : part) see(w);
  base = top + (top & 1u);
  store_signal(round.word, base);  // round 0 "completed": inactive
}

PWords::~PWords() {
  SignalPool &pool = signal_pool();
  pool.release(round);
  pool.release(done);
  pool.release(error);
  for (const SignalWord &w : part) pool.release(w);
}

Status PRequest::init(Side side, void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                      int peer, int tag, MPI_Comm comm, std::shared_ptr<PRequest> *out) {
  std::shared_ptr<PRequest> r(new PRequest);
  r->side_ = side;
  r->buf_ = static_cast<char *>(buf);
  r->partitions_ = partitions;
  r->count_ = static_cast<int>(count);  // the caller checked count <= INT_MAX
  r->peer_ = peer;
  r->tag_ = tag;
  r->comm_ = comm;
  int ni, na, nd, combiner;
  MPIX_MPI_CHECK(MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner));
  if (combiner == MPI_COMBINER_NAMED) {
    r->dt_ = dt;
  } else {
    // MPI lets the user free the datatype at once; the request keeps its own.
    MPIX_MPI_CHECK(MPI_Type_dup(dt, &r->dt_));
    r->dt_owned_ = true;
  }
  MPI_Aint lb = 0;
  MPIX_MPI_CHECK(MPI_Type_get_extent(r->dt_, &lb, &r->extent_));
  MPIX_MPI_CHECK(MPI_Type_size(r->dt_, &r->type_size_));
  MPIX_TRY(comm_ctx_get(comm, &r->ctx_));
  MPIX_TRY(buffer_backend(buf, r->dt_, &r->be_));
  MPI_Count tlb = 0, text = 0;
  MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(r->dt_, &tlb, &text));
  if (r->be_->kind() != StreamKind::host && (text != r->type_size_ || r->extent_ != r->type_size_))
    return make_status(MPI_ERR_TYPE,
                       "a partitioned device or managed buffer needs a contiguous datatype: "
                       "the agent stages it in dense copies");
  // What MPIX_Stream_comm_create told the provider about the stream (every rank of a stream
  // communicator passes it, with or without a GPU stream of its own).
  CommStreamInfo si;
  if (r->ctx_ && r->ctx_->stream) {
    ExecStream *ex = nullptr;
    MPIX_TRY(r->ctx_->stream->exec(&ex));
    r->device_ = ex->device();
    const StreamKind k = r->ctx_->stream->kind();
    // Host streams have no device, unless their backend stands in for one (MPIX_HOST_IPC).
    if (k != StreamKind::general &&
        (k != StreamKind::host || r->ctx_->stream->backend()->emulates_device_memory())) {
      si.backend = r->ctx_->stream->backend();
      si.device = ex->device();
      si.host_functions = ex->trigger_mode() == TriggerMode::hostfn;
    }
  }
  MPIX_TRY(private_comms_get(comm, r->ctx_ ? &si : nullptr, &r->pc_));
  r->words_ = std::make_shared<PWords>(partitions);
  // Direct rounds (direct_link.hpp): does this side qualify?
  {
    DirectSide ds;
    ds.setting_on = std::strcmp(setting_str(ApiSetting::partitioned_direct), "auto") == 0;
    ds.has_peer = peer != MPI_PROC_NULL;
    ds.pair_direct = ds.has_peer && r->pc_->data_ctx && r->pc_->data_ctx->prov &&
                     r->pc_->data_ctx->prov->gpu_direct_peer(peer);
    ds.cuda = r->be_->kind() == StreamKind::cuda || r->be_->emulates_device_memory();
    ds.device_memory = ds.cuda && r->be_->classify(buf) == MemKind::device;
    ds.bytes = static_cast<int64_t>(partitions) * count * r->type_size_;
    // (A GPU-direct pair implies a stream communicator of a device: device_ is set.)
    r->direct_refusal_ = direct_side_refusal(ds);
    if (!r->direct_refusal_ && side == Side::recv) {
      Status st = link_slot_acquire(r->be_, r->device_, &r->slot_);
      if (!st.is_ok()) {
        MPIX_LOG(info, "api", "partitioned receive: link words in device memory: %s",
                 st.what().c_str());
        r->direct_refusal_ = "no device memory for its link words";
      }
    }
  }
  // The header travels on pc_->hdr with the user's tag, as soon as the agent sees it.
  if (peer == MPI_PROC_NULL) {
    r->header_known_ = true;  // nothing is exchanged; rounds complete as they open
  } else if (side == Side::send) {
    r->header_known_ = true;  // only the receive side waits for the header
    MPIX_TRY(data_tags_acquire(partitions, &r->data_tag_base_));
    r->header_[0] = kHeaderMagic;
    r->header_[1] = partitions;
    r->header_[2] = static_cast<int64_t>(count) * r->type_size_;
    r->header_[3] = r->data_tag_base_;
    // The answer and confirmation take tags 2 * base and 2 * base + 1 on ctl.
    if (!r->direct_refusal_ && 2 * static_cast<int64_t>(r->data_tag_base_) + 1 > tag_upper_bound())
      r->direct_refusal_ = "its tags do not fit below MPI_TAG_UB";
    r->header_[4] = r->direct_candidate() ? 1 : 0;
    // On failure the destructor gives the tags back.
    MPIX_TRY(r->start_op(true, r->header_, 5, MPI_INT64_T, tag, r->pc_->hdr_ctx, &kHeaderGate, 0,
                         &r->header_op_));
    // The receiver answers an offer on ctl, tagged by the data-tag base (unique among this
    // process's live sends).
    if (r->direct_candidate())
      MPIX_TRY(r->start_op(false, &r->reply_, static_cast<int>(sizeof r->reply_), MPI_BYTE,
                           r->ctl_tag(false), r->pc_->ctl_ctx, &kHeaderGate, 0, &r->reply_op_));
  } else {
    MPIX_TRY(r->start_op(false, r->header_, 5, MPI_INT64_T, tag, r->pc_->hdr_ctx, &kHeaderGate, 0,
                         &r->header_op_));
  }
  r->direct_.store(r->direct_candidate() ? kDirectUnknown : kDirectNo);
  if (!r->direct_candidate() && r->be_->kind() != StreamKind::host)
    MPIX_LOG(info, "api", "partitioned %s %s %d tag %d: the agents' path: %s",
             side == Side::send ? "send" : "receive", side == Side::send ? "to" : "from", peer, tag,
             r->direct_refusal_);
  *out = std::move(r);
  return {};
}

PRequest::~PRequest() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // The engine keeps a request until its header op completed (engine_idle), so none is left.
  if (!finalized && dt_owned_) MPI_Type_free(&dt_);
  if (side_ == Side::send && peer_ != MPI_PROC_NULL) data_tags_release(data_tag_base_, partitions_);
  if (side_stream_) direct_stream_release(be_, device_, std::move(side_stream_));
}

Status PRequest::start_op(bool send, void *buf, int count, MPI_Datatype dt, int tag,
                          const std::shared_ptr<CommCtx> &ctx, const uint64_t *gate,
                          uint64_t threshold, Op **out) {
  OpPlan plan;
  plan.call = send ? "partitioned send" : "partitioned receive";
  plan.ctx = &ctx;
  plan.be = be_;
  plan.device = device_;
  plan.gate = gate;
  Op *op = nullptr;
  MPIX_TRY(op_create(p2p_args(send ? OpKind::send : OpKind::recv, buf, count, dt, peer_, tag,
                              ctx == pc_->hdr_ctx   ? pc_->hdr
                              : ctx == pc_->ctl_ctx ? pc_->ctl
                                                    : pc_->data),
                     plan, &op));
  op->threshold = threshold;  // op_create set the gate
  // The engine's reference: it reads the status once the op is complete, then drops it.
  op->refs.fetch_add(1, std::memory_order_relaxed);
  Status st = op_submit(op, nullptr, nullptr);
  if (!st.is_ok()) {
    op->refs.fetch_sub(1, std::memory_order_relaxed);
    op_discard(op);
    return st;
  }
  *out = op;
  return {};
}

Status PRequest::stream_of_comm(ExecStream **ex, FutexLock **order) {
  if (!ctx_ || !ctx_->stream)
    return make_status(MPI_ERR_COMM,
                       "the request's communicator has no stream: enqueued "
                       "start and wait need a stream communicator (MPIX_Stream_comm_create)");
  MPIX_TRY(ctx_->stream->exec(ex));
  *order = &ctx_->stream->enqueue_mutex();
  return {};
}

Status PRequest::device_error(bool consume) {
  const uint64_t v = load_signal(words_->error.word);
  if (static_cast<int64_t>(v - words_->base) <= 0) return {};
  if (v == reported_error_) return {};  // reported once already
  if (consume) reported_error_ = v;
  const uint64_t code = v - words_->base - 1;
  const int kind = static_cast<int>(code >> 32), part = static_cast<int>(code & 0xffffffffu);
  switch (kind) {
    case MPIX_PREQ_ERR_RANGE:
      return make_status(MPI_ERR_ARG, "a device call named partition %d, outside 0..%d", part,
                         partitions_ - 1);
    case MPIX_PREQ_ERR_INACTIVE:
      return make_status(MPI_ERR_REQUEST,
                         "a device call (partition %d) used the request while "
                         "it was not active",
                         part);
    case MPIX_PREQ_ERR_DOUBLE:
      return make_status(MPI_ERR_ARG,
                         "device MPIX_Pready marked partition %d ready twice in "
                         "one round",
                         part);
    case MPIX_PREQ_ERR_SIDE:
      return make_status(MPI_ERR_REQUEST,
                         "a device call (partition %d) used a %s request the "
                         "wrong way (MPIX_Pready on a receive / MPIX_Parrived on a send)",
                         part, side_ == Side::send ? "send" : "receive");
    default:
      return make_status(MPI_ERR_INTERN, "unknown device error record %#llx",
                         static_cast<unsigned long long>(code));
  }
}

Status PRequest::check_start(bool enqueued) {
  if (active_)
    return make_status(MPI_ERR_REQUEST,
                       "request is already active (complete it with MPIX_Wait, "
                       "MPIX_Test or MPIX_Pwait_enqueue before starting it again)");
  const uint64_t r = current_round();
  if (!enqueued && last_wait_enqueued_ && !reached(load_signal(words_->round.word), words_->R(r)))
    return make_status(MPI_ERR_REQUEST,
                       "round %llu was completed with MPIX_Pwait_enqueue and "
                       "the stream has not reached that wait yet: restart with "
                       "MPIX_Start_enqueue, or synchronise the stream first",
                       static_cast<unsigned long long>(r));
  if (enqueued && (!ctx_ || !ctx_->stream))
    return make_status(MPI_ERR_COMM,
                       "the request's communicator has no stream: "
                       "MPIX_Start_enqueue needs a stream communicator");
  return {};
}

void PRequest::start_ops(std::vector<StreamMemOp> *ops, bool *tell) {
  const uint64_t r = current_round() + 1;
  ops->push_back({StreamMemOp::write, words_->round.word, words_->R(r) - 1});
  round_mirrors_append(*words_, words_->R(r) - 1, ops);
  // A direct receiver opens its buffer to the sender's copy (until the path is known too:
  // on the agents' path nobody reads the word).
  if (side_ == Side::recv && direct_.load(std::memory_order_acquire) != kDirectNo)
    ops->push_back(StreamMemOp{StreamMemOp::write, slot_.words, words_->R(r) - 1, true});
  // Kernels of this round on read only device words once the rounds are known to go direct.
  *tell =
      side_ == Side::recv && !told_direct_ && direct_.load(std::memory_order_acquire) == kDirectYes;
  if (*tell) ops->push_back(StreamMemOp{StreamMemOp::write, slot_.words + 2, 1, true});
}

void PRequest::mark_started(bool told) {
  told_direct_ = told_direct_ || told;
  partitioned_engine().activate(shared_from_this());
  active_ = true;
  last_wait_enqueued_ = false;
}

Status PRequest::start(bool enqueued) {
  std::lock_guard<std::mutex> lk(mu_);
  MPIX_TRY(check_start(enqueued));
  if (enqueued) return enqueue_starts({this});
  bool tell = false;
  {
    // The device copies first: a kernel launched once this returns reads the new round.
    const uint64_t r = current_round() + 1;
    MPIX_TRY(round_mirrors_store(*words_, words_->R(r) - 1));
    store_signal(words_->round.word, words_->R(r) - 1);
    if (side_ == Side::recv && direct_.load(std::memory_order_acquire) != kDirectNo) {
      const uint64_t open = words_->R(r) - 1;
      MPIX_TRY(be_->copy_sync(slot_.words, &open, sizeof open));
    }
    if (side_ == Side::recv && !told_direct_ &&
        direct_.load(std::memory_order_acquire) == kDirectYes) {
      const uint64_t yes = 1;
      MPIX_TRY(be_->copy_sync(slot_.words + 2, &yes, sizeof yes));
      tell = true;
    }
  }
  mark_started(tell);
  return {};
}

Status PRequest::pready(const int *parts, int n) {
  if (side_ != Side::send)
    return make_status(MPI_ERR_REQUEST, "MPIX_Pready on a partitioned receive request");
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_) return make_status(MPI_ERR_REQUEST, "request is not active (MPIX_Start it first)");
  const uint64_t R = words_->R(current_round());
  MPIX_TRY(check_marks(parts, n, R));
  // The device marks first (a direct round may wait for them), then the host words.
  if (words_->dmarks) MPIX_TRY(device_marks_store(*words_, parts, n, R));
  for (int i = 0; i < n; ++i) store_signal(words_->part[parts[i]].word, R);
  notifier().notify();  // the agent may be asleep
  return {};
}

Status PRequest::check_marks(const int *parts, int n, uint64_t R) const {
  std::vector<char> seen(n > 1 ? static_cast<std::size_t>(partitions_) : 0u, 0);
  for (int i = 0; i < n; ++i) {
    const int p = parts[i];
    if (p < 0 || p >= partitions_)
      return make_status(MPI_ERR_ARG, "partition %d is outside 0..%d", p, partitions_ - 1);
    const bool by_stream = !enq_marks_.empty() && enq_marks_[static_cast<std::size_t>(p)] == R;
    if (by_stream || reached(load_signal(words_->part[p].word), R) || (n > 1 && seen[p]++))
      return make_status(MPI_ERR_ARG, "partition %d is already marked ready in this round%s", p,
                         by_stream ? " (by MPIX_Pready_enqueue)" : "");
  }
  return {};
}

Status PRequest::parrived(int partition, int *flag) {
  if (side_ != Side::recv)
    return make_status(MPI_ERR_REQUEST, "MPIX_Parrived on a partitioned send request");
  if (!flag) return make_status(MPI_ERR_ARG, "flag is NULL");
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_) return make_status(MPI_ERR_REQUEST, "request is not active");
  if (partition < 0 || partition >= partitions_)
    return make_status(MPI_ERR_ARG, "partition %d is outside 0..%d", partition, partitions_ - 1);
  *flag = reached(load_signal(words_->part[partition].word), words_->R(current_round()));
  if (!*flag && direct_.load(std::memory_order_acquire) == kDirectYes) {
    bool yes = false;
    MPIX_TRY(direct_arrived(current_round(), &yes));
    *flag = yes;
  }
  return {};
}

void PRequest::fill_status(MPI_Status *st) {
  std::lock_guard<std::mutex> lk(status_mu_);
  if (st != MPI_STATUS_IGNORE) *st = round_status_;
}

Status PRequest::wait(MPI_Status *status, int *flag) {
  uint64_t r = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!active_) {
      status_set_empty(status);
      if (flag) *flag = 1;
      return device_error(true);
    }
    r = current_round();
  }
  if (direct_candidate()) {
    bool known = false;
    MPIX_TRY(direct_known(!flag, &known));
    if (!known) {  // MPIX_Test before the path is known
      *flag = 0;
      return {};
    }
  }
  const int direct = direct_.load(std::memory_order_acquire);
  if (direct == kDirectFailed) {
    std::lock_guard<std::mutex> lk(mu_);
    return fail_round(r, direct_error_, status, flag);
  }
  if (direct == kDirectYes && side_ == Side::send) {
    // The round's push, once, on a private stream of mpix's (its done write ends the wait).
    std::lock_guard<std::mutex> lk(mu_);
    if (active_ && current_round() == r && pushed_round_ != r) {
      MPIX_TRY(direct_push(r, true));
      pushed_round_ = r;
      host_steps_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Not under mu_: other threads may mark partitions of this round meanwhile.
  const uint64_t R = words_->R(r);
  Backoff backoff;
  for (;;) {
    const uint64_t epoch = notifier().epoch();
    if (reached(load_signal(words_->done.word), R)) break;
    if (direct == kDirectYes && side_ == Side::recv) {
      bool yes = false;
      MPIX_TRY(direct_arrived(r, &yes));
      if (yes) {
        if (!reached(load_signal(words_->done.word), R)) store_signal(words_->done.word, R);
        break;
      }
    }
    {
      // A device misuse fails the round (it might never complete): report it, abandon the
      // round and leave the request inactive, rather than hang.
      std::lock_guard<std::mutex> lk(mu_);
      Status derr = device_error(true);
      if (!derr.is_ok()) return fail_round(r, derr, status, flag);
    }
    if (flag) {
      *flag = 0;
      return {};
    }
    backoff.pause(epoch);
  }
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_ || current_round() != r) {
    // Another thread completed (and maybe restarted) it meanwhile.
    status_set_empty(status);
  } else {
    active_ = false;
    if (!reached(load_signal(words_->round.word), R)) store_signal(words_->round.word, R);
    if (direct == kDirectYes) set_round_status(r, MPI_SUCCESS);
    fill_status(status);
    MPIX_TRY(round_mirrors_store(*words_, R));
  }
  if (flag) *flag = 1;
  MPIX_TRY(device_error(true));
  std::lock_guard<std::mutex> slk(status_mu_);
  if (round_status_.MPI_ERROR != MPI_SUCCESS)
    return make_status(round_status_.MPI_ERROR, "%s", round_error_text_.c_str());
  return {};
}

Status PRequest::pwait_path_known() {
  if (!direct_candidate()) return {};
  {
    // Only a started request gets its path chosen (the engine sees it once started).
    std::lock_guard<std::mutex> lk(mu_);
    if (!active_)
      return make_status(MPI_ERR_REQUEST, "request is not active (nothing to wait for)");
  }
  // The first round waits until the path is known (the peer's header, answer or confirmation).
  bool known = false;
  MPIX_TRY(direct_known(true, &known));
  return direct_.load(std::memory_order_acquire) == kDirectFailed ? direct_error_ : Status{};
}

Status PRequest::pwait_ops(MPI_Status *status, std::vector<StreamMemOp> *ops) {
  const uint64_t r = current_round(), R = words_->R(r);
  if (direct_.load(std::memory_order_acquire) == kDirectYes) {
    MPIX_TRY(direct_round_ops(r, ops));
    set_round_status(r, MPI_SUCCESS);
    fill_status(status);
    return {};
  }
  {
    std::lock_guard<std::mutex> slk(status_mu_);
    if (status_round_ == r) {
      if (status != MPI_STATUS_IGNORE) *status = round_status_;
    } else if (status != MPI_STATUS_IGNORE) {
      enqueued_status_.emplace_back(r, status);
    }
  }
  // Wait for the round, mark it done.
  ops->push_back({StreamMemOp::wait, words_->done.word, R});
  ops->push_back({StreamMemOp::write, words_->round.word, R});
  round_mirrors_append(*words_, R, ops);
  return {};
}

Status PRequest::mark_waited() {
  active_ = false;
  last_wait_enqueued_ = true;
  return device_error(true);
}

Status PRequest::pwait_enqueue(MPI_Status *status) {
  MPIX_TRY(pwait_path_known());
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_) return make_status(MPI_ERR_REQUEST, "request is not active (nothing to wait for)");
  return enqueue_waits({this}, {status});
}

Status PRequest::fail_round(uint64_t r, const Status &err, MPI_Status *status, int *flag) {
  if (active_ && current_round() == r) abandon_round(words_->R(r));
  status_set_empty(status);
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = err.code();
  if (flag) *flag = 1;
  return err;
}

void PRequest::abandon_round(uint64_t R) {
  active_ = false;
  const int direct = direct_.load(std::memory_order_acquire);
  if (direct == kDirectYes || direct == kDirectFailed) {
    // Direct rounds have nothing in the agent's hands. A push waiting for partitions that a
    // misuse left unmarked goes ahead (the round's data is undefined, as the misuse made it).
    if (side_ == Side::send) {
      std::vector<int> unmarked;
      for (std::size_t p = 0; p < words_->part.size(); ++p)
        if (!reached(load_signal(words_->part[p].word), R)) unmarked.push_back(static_cast<int>(p));
      Status st = words_->dmarks ? device_marks_store(*words_, unmarked.data(),
                                                      static_cast<int>(unmarked.size()), R)
                                 : Status{};
      if (!st.is_ok())
        MPIX_LOG(warn, "api", "abandoning a round: its direct copy may wait on: %s",
                 st.what().c_str());
      for (int p : unmarked) store_signal(words_->part[p].word, R);
    }
    if (!reached(load_signal(words_->done.word), R)) store_signal(words_->done.word, R);
  } else {
    cancel_.store(true);  // the agent drops what is in flight and writes done
  }
  if (!reached(load_signal(words_->round.word), R)) store_signal(words_->round.word, R);
  Status st = round_mirrors_store(*words_, R);
  if (!st.is_ok())
    MPIX_LOG(warn, "api", "abandoning a round: its device requests still read it as active: %s",
             st.what().c_str());
  notifier().notify();
}

Status PRequest::attach_round_mirror(const RoundMirror &m,
                                     const std::function<Status(uint64_t)> &init) {
  std::lock_guard<std::mutex> lk(mu_);
  const uint64_t R = words_->R(current_round());
  MPIX_TRY(init(active_ ? R - 1 : R));
  std::lock_guard<std::mutex> mlk(words_->mirror_mu);
  words_->mirrors.push_back(m);
  return {};
}

Status PRequest::release(bool *released) {
  std::lock_guard<std::mutex> lk(mu_);
  *released = false;
  if (active_) {
    if (static_cast<int64_t>(load_signal(words_->error.word) - words_->base) <= 0)
      return make_status(MPI_ERR_REQUEST,
                         "request is active: complete it (MPIX_Wait / "
                         "MPIX_Test / MPIX_Pwait_enqueue) before freeing it");
    // A device misuse stalled the round: abandon it.
    abandon_round(words_->R(current_round()));
  }
  // The user's handle is gone: let go of the stream communicator's context now (it keeps the
  // stream attached), even if the agent still finishes enqueued rounds.
  ctx_.reset();
  partitioned_engine().release(shared_from_this());
  *released = true;
  return device_error(true);
}

namespace {

// The Runtime's partitioned requests (MPI_Request handles of MPIX_Psend_init / _Precv_init).
struct Registry final : RuntimePart {
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<PRequest>> live;
  uint64_t next_id = 1;

  // At MPI_Finalize: requests whose round was started and never completed are reported, as
  // enqueued ops never retired are (core/runtime.cpp). Requests never freed are left alive, as
  // ops are: their teardown calls MPI, and a kernel may still hold their device view.
  ~Registry() override {
    std::size_t active = 0;
    for (auto &kv : live) active += kv.second->report_if_active() ? 1 : 0;
    if (active)
      MPIX_LOG(warn, "api", "MPI_Finalize: %zu partitioned request(s) still active (listed above)",
               active);
    for (auto &kv : live) runtime_keep_forever(std::move(kv.second));
  }
};

// Null before runtime_init and after MPI_Finalize.
Registry *registry() {
  Runtime *rt = runtime_current();
  return rt ? &rt->part<Registry>() : nullptr;
}

}  // namespace

bool PRequest::report_if_active() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!active_) return false;
  MPIX_LOG(warn, "api",
           "partitioned %s request (peer %d, tag %d, %d partitions) still active "
           "at MPI_Finalize: round %llu was started and never completed (MPIX_Wait, MPIX_Test "
           "or MPIX_Pwait_enqueue)",
           side_ == Side::send ? "send" : "receive", peer_, tag_, partitions_,
           static_cast<unsigned long long>(current_round()));
  return true;
}

uint64_t prequest_register(std::shared_ptr<PRequest> req) {
  Registry &r = *registry();  // after runtime_init
  std::lock_guard<std::mutex> lk(r.mu);
  uint64_t id = r.next_id++;
  r.live.emplace(id, std::move(req));
  return id;
}

std::shared_ptr<PRequest> prequest_lookup(uint64_t id) {
  Registry *rp = registry();
  if (!rp) return nullptr;
  Registry &r = *rp;
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.live.find(id);
  return it == r.live.end() ? nullptr : it->second;
}

void prequest_unregister(uint64_t id) {
  std::shared_ptr<PRequest> victim;
  {
    Registry *rp = registry();
    if (!rp) return;
    Registry &r = *rp;
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.live.find(id);
    if (it == r.live.end()) return;
    victim = std::move(it->second);
    r.live.erase(it);
  }
  victim.reset();  // outside the lock: the destructor calls MPI
}

}  // namespace mpix
