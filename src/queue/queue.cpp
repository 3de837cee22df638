#include "queue/queue.hpp"

#include <atomic>
#include <unordered_map>

#include "base/waiter.hpp"
#include "core/comm_ctx.hpp"
#include "core/op.hpp"
#include "core/op_create.hpp"
#include "core/provider.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "queue/queue_comm.hpp"
#include "queue/queue_stream.hpp"

namespace mpix {

Status Queue::create(MPI_Comm comm, void *native, std::shared_ptr<Queue> *out) {
  MPIX_TRY(runtime_init());
  std::shared_ptr<Queue> q(new Queue);
  q->comm_ = comm;
  MPIX_TRY(queue_stream_open(comm, native, &q->stream_));
  // Trigger words are recycled and their values only grow: count starts from what is there.
  q->base_ = load_signal(q->stream_->trigger_word());
  std::shared_ptr<CommCtx> sctx;
  MPIX_TRY(comm_ctx_get(comm, &sctx));
  // Ops on a plain communicator: provider mpi needs no state (any plain communicator will
  // do); another provider's is opened on the queue's communicator (collective, first time).
  if (sctx) q->plain_ctx_ = std::make_shared<CommCtx>();
  else MPIX_TRY(queue_plain_ctx(comm, &q->plain_ctx_));
  *out = std::move(q);
  return {};
}

Queue::~Queue() = default;

Status Queue::enqueue(const EnqueueArgs &a, MPI_Request *request) {
  std::shared_ptr<CommCtx> ctx;
  MPIX_TRY(comm_ctx_get(a.comm, &ctx));
  if (!ctx) {
    // A plain communicator: a provider that posts on the communicator itself carries ops on
    // any; another has state for the queue's own communicator only (queue_plain_ctx).
    Provider *prov = nullptr;
    MPIX_TRY(provider_get(&prov));
    if (!prov->caps().plain_comms && a.comm != comm_)
      return make_status(MPI_ERR_COMM,
                         "provider %s carries queue ops on a plain communicator only on "
                         "the queue's own (MPIX_Create_queue opens its state there); comm is "
                         "another",
                         prov->name());
    ctx = plain_ctx_;
  }
  OpPlan plan;
  plan.call = a.kind == OpKind::send ? "MPIX_Enqueue_send" : "MPIX_Enqueue_recv";
  plan.ctx = &ctx;
  plan.stream = &stream_;
  plan.request = true;
  Op *op = nullptr;
  MPIX_TRY(op_create(a, plan, &op));
  std::lock_guard<std::mutex> lk(mu_);
  std::lock_guard<FutexLock> slk(stream_->enqueue_mutex());
  // Fires at the next start; its staging copies go at that start and at the wait after it.
  op->threshold = base_ + starts_ + 1;
  Status st = op_submit(op, nullptr, nullptr);
  if (!st.is_ok()) {
    op_discard(op);
    return st;
  }
  unwaited_.push_back({op->done.word, op->done_value, op->threshold, op->stager});
  *request = op->grequest;
  return {};
}

Status Queue::start() {
  std::lock_guard<std::mutex> lk(mu_);
  ExecStream *ex = nullptr;
  MPIX_TRY(stream_->exec(&ex));
  std::lock_guard<FutexLock> slk(stream_->enqueue_mutex());
  const uint64_t value = base_ + starts_ + 1;
  // The ops this start fires are the newest: copy their device send buffers out now, in stream
  // order before the trigger, so that the sends see every kernel enqueued before the start.
  std::size_t first = unwaited_.size();
  while (first > 0 && unwaited_[first - 1].threshold == value) --first;
  for (std::size_t i = first; i < unwaited_.size(); ++i)
    if (unwaited_[i].stager)
      MPIX_TRY(unwaited_[i].stager->before_trigger(*ex, stream_->trigger_word(), value));
  MPIX_TRY(ex->write_value(stream_->trigger_word(), value));
  ++starts_;
  return {};
}

Status Queue::wait() {
  std::lock_guard<std::mutex> lk(mu_);
  const uint64_t started = base_ + starts_;
  std::size_t n = 0;
  while (n < unwaited_.size() && reached(started, unwaited_[n].threshold)) ++n;
  if (n == 0) return {};
  ExecStream *ex = nullptr;
  MPIX_TRY(stream_->exec(&ex));
  std::lock_guard<FutexLock> slk(stream_->enqueue_mutex());
  for (std::size_t i = 0; i < n; ++i) {
    const Pending &p = unwaited_[i];
    // A word that already holds the value needs no stream wait: values only grow, and a
    // recycled word's next owner waits for a larger one.
    if (!reached(load_signal(p.word), p.value)) {
      MPIX_TRY(ex->wait_value(p.word, p.value));
      stream_->wait_order().note(p.word, p.value);
    }
    // A staged receive lands in device memory after its wait, in stream order; its bounce
    // buffer is free again once the stream writes the next start's value.
    if (p.stager) MPIX_TRY(p.stager->after_wait(*ex, stream_->trigger_word(), base_ + starts_ + 1));
  }
  unwaited_.erase(unwaited_.begin(), unwaited_.begin() + static_cast<std::ptrdiff_t>(n));
  return {};
}

Status Queue::check_idle() const {
  int64_t pending = stream_->pending_ops.load();
  if (pending > 0)
    return make_status(MPI_ERR_PENDING,
                       "%lld op(s) enqueued on the queue have not completed "
                       "(started and waited for?)",
                       static_cast<long long>(pending));
  return {};
}

Status Queue::drain() {
  ExecStream *ex = nullptr;
  MPIX_TRY(stream_->exec(&ex));
  return ex->synchronize();
}

namespace {

struct Registry;
// The registry the last Runtime left (see ~Registry); null until MPI_Finalize.
std::atomic<Registry *> g_after_finalize{nullptr};

// The Runtime's queues.
struct Registry final : RuntimePart {
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<Queue>> live;
  uint64_t next_id = 1;
  // Queues never freed outlive the Runtime, in a registry of their own: tearing one down
  // drains its stream, which may wait for an op that never completes; and MPIX_Queue_free,
  // which needs no MPI, still frees them after MPI_Finalize.
  ~Registry() override {
    if (live.empty()) return;
    auto left = std::make_shared<Registry>();
    left->live = std::move(live);
    g_after_finalize.store(left.get(), std::memory_order_release);
    runtime_keep_forever(std::move(left));
  }
};

// The Runtime's registry, or the one left after MPI_Finalize (null before runtime_init).
Registry *registry() {
  Runtime *rt = runtime_current();
  return rt ? &rt->part<Registry>() : g_after_finalize.load(std::memory_order_acquire);
}

}  // namespace

uint64_t queue_register(std::shared_ptr<Queue> q) {
  Registry &r = *registry();  // after runtime_init (queue_create)
  std::lock_guard<std::mutex> lk(r.mu);
  uint64_t id = r.next_id++;
  r.live.emplace(id, std::move(q));
  return id;
}

std::shared_ptr<Queue> queue_lookup(uint64_t id) {
  Registry *rp = registry();
  if (!rp) return nullptr;
  Registry &r = *rp;
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.live.find(id);
  return it == r.live.end() ? nullptr : it->second;
}

Status queue_unregister(uint64_t id) {
  std::shared_ptr<Queue> q = queue_lookup(id);
  if (!q)
    return make_status(MPI_ERR_ARG, "queue handle %#llx is not a live queue (freed twice?)",
                       static_cast<unsigned long long>(id));
  MPIX_TRY(q->check_idle());
  // Outside the registry lock: may wait for the native stream.
  MPIX_TRY(q->drain());
  Registry &r = *registry();  // queue_lookup found it
  std::lock_guard<std::mutex> lk(r.mu);
  r.live.erase(id);
  return {};
}

}  // namespace mpix
