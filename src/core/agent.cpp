#include "core/agent.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/internal_thread.hpp"
#include "base/log.hpp"
#include "base/profile.hpp"
#include "base/waiter.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/op.hpp"
#include "core/op_create.hpp"
#include "core/provider.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"
#include "core/type_release.hpp"

namespace mpix {
namespace {

thread_local bool t_on_agent = false;  // set on the agent thread (agent_on_thread)

// The word whose value fires @p op: its stream's trigger word, or the gate of a gated op.
const uint64_t *trigger_of(const Op &op) { return op.gate ? op.gate : op.stream->trigger_word(); }

}  // namespace

// One per Runtime (core/runtime.hpp), which makes it on first use and stops it first at
// MPI_Finalize.
class Agent {
 public:
  Agent(Provider *prov, Provider *coll) : prov_(prov), coll_(coll), thread_([this] { run(); }) {}
  ~Agent() { stop(); }

  // Any thread. A lock-free push onto a stack the agent empties whole: ops of one stream are
  // submitted under its enqueue mutex (gated ops of one word in threshold order by their
  // scheduler), so their push order is their threshold order, which take_incoming restores by
  // reversing what it takes.
  // The agent is woken only when it sleeps (idle, or napping between polls of armed ops), and
  // only by the first submit since it fell asleep: awake, it takes the op at its next poll; a
  // later submit of the burst sees kNotified and leaves the wake-up to the first. Other sleepers
  // of the notifier (host streams, synchronizing threads) have no use for a new op, so the
  // common case wakes nobody.
  void submit(Op *op) {
    Op *head = incoming_.load(std::memory_order_relaxed);
    do {
      op->submit_next = head;
    } while (!incoming_.compare_exchange_weak(head, op, std::memory_order_seq_cst,
                                              std::memory_order_relaxed));
    // After the push, both seq_cst (see run()). Seeing kNotified, some submitter's CAS came
    // after the agent's kAsleep store of this sleep, so its notify bumps the epoch after the
    // agent read it, and ends the sleep.
    if (sleep_.load(std::memory_order_seq_cst) == kAsleep) {
      int expected = kAsleep;
      if (sleep_.compare_exchange_strong(expected, kNotified, std::memory_order_seq_cst))
        notifier().notify();
    }
  }

  // Any thread: op_fail's list, pushed like submit's (the op was submitted before).
  void abort(Op *op) {
    Op *head = aborted_.load(std::memory_order_relaxed);
    do {
      op->abort_next = head;
    } while (!aborted_.compare_exchange_weak(head, op, std::memory_order_seq_cst,
                                             std::memory_order_relaxed));
    notifier().notify();
  }

  void add_poller(AgentPoller *p) {
    {
      std::lock_guard<std::mutex> lk(poll_mu_);
      pollers_.push_back(p);
    }
    notifier().notify();
  }

  void remove_poller(AgentPoller *p) {
    std::lock_guard<std::mutex> lk(poll_mu_);
    for (auto it = pollers_.begin(); it != pollers_.end(); ++it)
      if (*it == p) {
        pollers_.erase(it);
        break;
      }
  }

  void stop() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    notifier().notify();
    thread_.join();
  }

 private:
  struct Armed {
    const uint64_t *trigger = nullptr;
    std::deque<Op *> ops;  // threshold order (enqueue order on the stream)
  };

  void run();
  bool take_incoming();
  bool take_aborted();
  // @p op, armed, leaves without being fired: its provider drops what arm() made, and the op
  // completes with @p why.
  void fail_unfired(Op *op, Status why);
  bool run_pollers(bool *busy);
  bool fire_reached();
  void complete(Op *op);
  void finish(Op *op);
  // op_complete, with MPIX_PROFILE's stage times; true when its request became a spare.
  bool op_complete_profiled(Op *op);
  bool copy_in_first(Op *op);
  bool poll_copies_in();
  void profile_seen(Op *op);

  // Whom it fires @p op on: the collective slot's provider for collectives (provider.hpp).
  Provider &provider_of(const Op &op) { return op.kind == OpKind::allreduce ? *coll_ : *prov_; }
  bool providers_busy() const { return prov_->busy() || (coll_ != prov_ && coll_->busy()); }
  bool providers_large() const {
    return prov_->large_in_flight() || (coll_ != prov_ && coll_->large_in_flight());
  }

  Provider *prov_;
  Provider *coll_;  // the collective slot's; prov_ where that carries collectives
  std::atomic<Op *> incoming_{nullptr};  // newest first, linked by Op::submit_next
  std::atomic<Op *> aborted_{nullptr};   // op_fail's ops, linked by Op::abort_next
  // Whether the agent sleeps until notified (see run() and submit()).
  enum : int { kAwake, kAsleep, kNotified };
  std::atomic<int> sleep_{kAwake};
  std::atomic<bool> stop_{false};
  std::mutex poll_mu_;  // held while pollers run, so remove_poller() waits them out
  std::vector<AgentPoller *> pollers_;
  // Agent-thread state.
  std::unordered_map<const uint64_t *, Armed> armed_;  // by trigger word (trigger_of)
  std::size_t armed_count_ = 0;
  // Spare requests to start when idle (op_make_spare): one for each op completed since the last
  // ones were made whose request is gone (not kept as a spare by request_recycle), so that the
  // spares follow what enqueues use. Capped, so that a burst leaves a bounded stock.
  static constexpr std::size_t kMaxSpareDeficit = 1024;
  std::size_t spare_deficit_ = 0;
  std::vector<Op *> done_;
  std::vector<Op *> copying_in_;  // STAGING_IN: complete once their copy in has run
  // MPIX_PROFILE: per stream, when its last completion word was written / trigger was seen.
  struct StreamTimes {
    uint64_t done = 0, seen = 0;
  };
  std::unordered_map<const Stream *, StreamTimes> prof_;
  std::thread thread_;  // last: starts after the members above exist
};

bool Agent::take_incoming() {
  if (!incoming_.load(std::memory_order_relaxed)) return false;
  Op *newest = incoming_.exchange(nullptr, std::memory_order_acquire);
  Op *oldest = nullptr;  // reversed: submission order
  while (newest) {
    Op *next = newest->submit_next;
    newest->submit_next = oldest;
    oldest = newest;
    newest = next;
  }
  for (Op *op = oldest; op;) {
    Op *next = op->submit_next;
    Armed &a = armed_[trigger_of(*op)];
    a.trigger = trigger_of(*op);
    a.ops.push_back(op);
    ++armed_count_;
    if (Provider &p = provider_of(*op); p.takes_ops()) p.take(*op);
    op = next;
  }
  return true;
}

// Ops whose enqueue failed after agent_submit (op_fail). One the stream has not reached is
// completed now, with the failure and without posting it (its bounce buffer may never have been
// filled); one already on its way finishes as usual.
bool Agent::take_aborted() {
  if (!aborted_.load(std::memory_order_relaxed)) return false;
  // Taken before the incoming stack: every op on this list was pushed there first, so the
  // take_incoming below (or an earlier one) has it in armed_.
  Op *op = aborted_.exchange(nullptr, std::memory_order_acquire);
  take_incoming();
  while (op) {
    Op *next = op->abort_next;
    if (op->state.load(std::memory_order_relaxed) == OpState::armed) {
      auto it = armed_.find(trigger_of(*op));
      if (it != armed_.end()) {
        std::deque<Op *> &q = it->second.ops;
        for (auto o = q.begin(); o != q.end(); ++o)
          if (*o == op) {
            q.erase(o);
            --armed_count_;
            fail_unfired(op, op->error);
            break;
          }
        if (q.empty()) armed_.erase(it);
      }
    }
    op_unref(op);  // op_fail's reference
    op = next;
  }
  return true;
}

void Agent::fail_unfired(Op *op, Status why) {
  provider_of(*op).disarm(*op);  // never fired: what arm() made goes now
  op_failed(*op, std::move(why));
  finish(op);
}

bool Agent::run_pollers(bool *busy) {
  std::lock_guard<std::mutex> lk(poll_mu_);
  bool any = false;
  for (AgentPoller *p : pollers_) {
    any |= p->poll();
    *busy |= p->busy();
  }
  return any;
}

bool Agent::fire_reached() {
  bool any = false;
  for (auto it = armed_.begin(); it != armed_.end();) {
    Armed &a = it->second;
    uint64_t v = load_signal(a.trigger);
    while (!a.ops.empty() && reached(v, a.ops.front()->threshold)) {
      Op *op = a.ops.front();
      // An op whose enqueue failed (op_fail) is not posted: take_aborted completes it.
      Status st;
      if (op->state.load(std::memory_order_relaxed) == OpState::armed &&
          (op->flags.load(std::memory_order_acquire) & kOpAborted))
        st = op->error;
      // Its stager may copy it out of device memory first (STAGING_OUT); the stream's later
      // ops wait behind it, so that ops are posted in stream order.
      if (st.is_ok() && op->stager) {
        if (op->state.load(std::memory_order_relaxed) == OpState::armed) {
          if (profile_enabled()) op->t_copy = profile_now_ns();
          bool copying = false;
          st = op->stager->on_fire(&copying);
          if (st.is_ok() && copying) {
            op_advance(*op, OpState::staging_out);
            any = true;
          }
        }
        if (st.is_ok() && op->state.load(std::memory_order_relaxed) == OpState::staging_out) {
          if (!op->stager->copy_done()) break;
          if (op->t_copy) profile_record(ProfileStage::copy_out, profile_now_ns() - op->t_copy);
        }
      }
      a.ops.pop_front();
      --armed_count_;
      any = true;
      if (!st.is_ok()) {  // posts nothing: a failed copy out leaves the bounce buffer unfilled
        fail_unfired(op, std::move(st));
        continue;
      }
      op_advance(*op, OpState::triggered);
      const bool prof = profile_enabled();
      if (prof) profile_seen(op);
      st = fault_fire_point();
      if (!st.is_ok()) {  // the injected fault stands in for a failing fire()
        fail_unfired(op, std::move(st));
        continue;
      }
      st = provider_of(*op).fire(*op);
      if (prof) op->t_posted = profile_now_ns();
      if (!st.is_ok()) {
        op_failed(*op, std::move(st));
        finish(op);
      }
    }
    if (a.ops.empty()) it = armed_.erase(it);
    else ++it;
  }
  return any;
}

void Agent::profile_seen(Op *op) {
  uint64_t t = profile_now_ns();
  op->t_seen = t;
  if (!op->stream) return;  // a gated op: no stream whose turnaround it could measure
  StreamTimes &st = prof_[op->stream.get()];
  // A trigger seen after a completion on the same stream may have waited for it.
  if (st.done > st.seen) profile_record(ProfileStage::turnaround, t - st.done);
  st.seen = t;
}

bool Agent::copy_in_first(Op *op) {
  if (!op->stager) return false;
  bool copying = false;
  if (profile_enabled()) op->t_copy = profile_now_ns();
  Status cs = op->stager->on_complete(op->status, &copying);
  if (!cs.is_ok()) {
    op_failed(*op, std::move(cs));
    return false;
  }
  if (!copying) return false;
  op_advance(*op, OpState::staging_in);
  copying_in_.push_back(op);
  return true;
}

bool Agent::poll_copies_in() {
  bool any = false;
  for (std::size_t i = 0; i < copying_in_.size();) {
    Op *op = copying_in_[i];
    if (!op->stager->copy_done()) {
      ++i;
      continue;
    }
    copying_in_[i] = copying_in_.back();
    copying_in_.pop_back();
    if (op->t_copy) profile_record(ProfileStage::copy_in, profile_now_ns() - op->t_copy);
    finish(op);
    any = true;
  }
  return any;
}

void Agent::complete(Op *op) {
  // Its stager may copy the data into device memory before the completion word (STAGING_IN;
  // poll_copies_in finishes the op once the copy has run).
  if (!copy_in_first(op)) finish(op);
}

void Agent::finish(Op *op) {
  // Read before op_complete, which may retire the op.
  const bool had_request = op->grequest != MPI_REQUEST_NULL;
  if (op_complete_profiled(op) || !had_request) return;  // its request kept as a spare, or none
  if (spare_deficit_ < kMaxSpareDeficit) ++spare_deficit_;
}

bool Agent::op_complete_profiled(Op *op) {
  if (profile_enabled() && op->t_seen) {
    uint64_t t_complete = profile_now_ns();
    profile_record(ProfileStage::post, op->t_posted - op->t_seen);
    profile_record(ProfileStage::network, t_complete - op->t_posted);
    const Stream *s = op->stream.get();  // op_complete may delete the op
    const bool recycled = op_complete(*op);
    const uint64_t t = profile_now_ns();
    profile_record(ProfileStage::complete, t - t_complete);
    if (s) prof_[s].done = t;
    return recycled;
  }
  return op_complete(*op);
}

void Agent::run() {
  InternalScope internal;  // its MPI calls on stream communicators go straight to MPI
  t_on_agent = true;
  name_this_thread("mpix-agent");
  Backoff backoff;
  while (!stop_.load()) {
    uint64_t epoch = notifier().epoch();
    type_release_run();
    bool progress = take_incoming();
    progress |= take_aborted();
    progress |= fire_reached();
    done_.clear();
    progress |= prov_->progress(done_);
    if (coll_ != prov_) progress |= coll_->progress(done_);
    for (Op *op : done_) complete(op);
    // The completion words just written are read by other threads (a host stream's worker),
    // which may wait for this core: let them run now rather than after a spin (handoff_yield).
    // Only once nothing is left in flight: while transfers are, the reader (a wait at the end
    // of a window) mostly waits for a later completion, and a yield per completion cost windows
    // of 16-64 KiB messages half their bandwidth over ofi:tcp on 2 cores (session 24).
    if (!done_.empty() && !providers_busy()) handoff_yield();
    progress |= poll_copies_in();
    bool pollers_busy = false;
    progress |= run_pollers(&pollers_busy);
    if (progress) {
      backoff.reset();
      continue;
    }
    if (armed_count_ == 0 && !providers_busy() && !pollers_busy && copying_in_.empty()) {
      // Idle, with spare requests owed: start them now (each an MPI_Grequest_start an enqueue
      // then skips), until a new op arrives; then look again instead of sleeping. Only when
      // idle: between polls of armed ops they would delay firing, and a poll per spare (Open
      // MPI yields in its progress when oversubscribed) made small exchanges slower.
      if (spare_deficit_ > 0) {
        while (spare_deficit_ > 0 && !incoming_.load(std::memory_order_relaxed))
          spare_deficit_ = op_make_spare() ? spare_deficit_ - 1 : 0;
        continue;
      }
      // Idle: nothing can happen until a new op arrives, which notifies while sleep_ is
      // kAsleep. Set, then look again (both seq_cst, as in submit): either this load sees an op
      // pushed meanwhile, or its submitter sees kAsleep and notifies (or sees that one did),
      // which ends the wait at once: the notify bumps the epoch read at the top of the loop.
      sleep_.store(kAsleep, std::memory_order_seq_cst);
      if (!incoming_.load(std::memory_order_seq_cst))
        notifier().wait(epoch, std::chrono::milliseconds(100));
      // seq_cst, so that a submitter's load orders against it too (submit's comment).
      sleep_.store(kAwake, std::memory_order_seq_cst);
      backoff.reset();
    } else if (backoff.sleeping()) {
      // Napping: a new op ends the nap (as before), so that its trigger is polled closely.
      sleep_.store(kAsleep, std::memory_order_seq_cst);
      if (!incoming_.load(std::memory_order_seq_cst))
        backoff.pause(epoch, providers_busy(), providers_large());
      sleep_.store(kAwake, std::memory_order_seq_cst);
    } else {
      backoff.pause(epoch, providers_busy(), providers_large());
    }
  }
  MPIX_LOG(debug, "agent", "stopped");
}

namespace {

// The Runtime's agent once started; null before and after.
Agent *started_agent() {
  Runtime *rt = runtime_current();
  return rt ? rt->agent_started() : nullptr;
}

}  // namespace

bool agent_on_thread() { return t_on_agent; }

void agent_submit(Op *op) {
  // agent_start ran before (op_create), and the agent lives until MPI_Finalize.
  runtime().agent_started()->submit(op);
}

void agent_abort(Op *op) {
  // The op was submitted, so the agent exists.
  if (Agent *a = started_agent()) a->abort(op);
}

std::atomic<bool> g_agent_running{false};

Status agent_start_slow() {
  Runtime *rt = runtime_current();
  if (!rt) return make_status(MPI_ERR_OTHER, "mpix is not initialised (or MPI was finalised)");
  Agent *a = nullptr;
  MPIX_TRY(rt->agent(&a));
  g_agent_running.store(true, std::memory_order_release);
  return {};
}

Status agent_add_poller(AgentPoller *p) {
  Runtime *rt = runtime_current();
  if (!rt) return make_status(MPI_ERR_OTHER, "mpix is not initialised (or MPI was finalised)");
  Agent *a = nullptr;
  MPIX_TRY(rt->agent(&a));
  a->add_poller(p);
  return {};
}

void agent_remove_poller(AgentPoller *p) {
  if (Agent *a = started_agent()) a->remove_poller(p);
}

Status agent_make(Provider *prov, Provider *coll, PartPtr<Agent> *out) {
  // Open MPI binds each of two ranks to one core by default: mpix's threads then share it with
  // the application's, and every wait must hand that core over (waiter.hpp, one_cpu_here).
  if (one_cpu_here())
    MPIX_LOG(warn, "agent",
             "this process may run on one CPU only (its affinity mask): mpix's agent thread "
             "shares it with yours, which costs latency and bandwidth; give each rank several "
             "cores (mpirun --bind-to none, or --bind-to socket / a cpu-set per rank)");
  try {
    out->reset(new Agent(prov, coll));
  } catch (const std::system_error &e) {
    return make_status(MPI_ERR_OTHER, "could not start the agent thread: %s", e.what());
  } catch (const std::bad_alloc &) {
    return make_status(MPI_ERR_NO_MEM, "out of memory starting the agent");
  }
  return {};
}

void agent_join(Agent &a) { a.stop(); }

void part_delete(Agent *a) { delete a; }

}  // namespace mpix
