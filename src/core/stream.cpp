#include "core/stream.hpp"

#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "core/agent.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream_release.hpp"

namespace mpix {

Stream::Stream(uint64_t id, StreamKind kind, Backend *backend, std::unique_ptr<ExecStream> exec)
    : id_(id),
      kind_(kind),
      backend_(backend),
      may_stage_(backend && staging_possible(*backend)),
      exec_(std::move(exec)),
      trigger_(signal_pool().acquire()) {
  // Thresholds start above the word's current value (words are recycled, values only grow).
  last_threshold_ = load_trigger_base();
  exec_fast_.store(exec_.get(), std::memory_order_release);
}

std::atomic<bool> g_stream_release_pending{false};

namespace {

std::mutex g_release_mu;
std::vector<Stream *> g_release;  // guarded by g_release_mu

}  // namespace

void stream_delete(Stream *s) {
  if (!agent_on_thread()) {
    delete s;
    return;
  }
  MPIX_LOG(debug, "stream", "stream %llu: last reference on the agent thread; released later",
           static_cast<unsigned long long>(s->id()));
  std::lock_guard<std::mutex> lk(g_release_mu);
  g_release.push_back(s);
  g_stream_release_pending.store(true, std::memory_order_relaxed);
}

void stream_release_run() {
  if (agent_on_thread()) return;
  std::vector<Stream *> take;
  {
    std::lock_guard<std::mutex> lk(g_release_mu);
    take.swap(g_release);
    g_stream_release_pending.store(false, std::memory_order_relaxed);
  }
  for (Stream *s : take) delete s;
}

std::shared_ptr<Stream> make_stream(uint64_t id, StreamKind kind, Backend *backend,
                                    std::unique_ptr<ExecStream> exec) {
  return std::shared_ptr<Stream>(new Stream(id, kind, backend, std::move(exec)), stream_delete);
}

std::atomic<int> Stream::deferring_streams_{0};

void Stream::set_defer_triggers(bool on) {
  if (on != defer_triggers_) deferring_streams_.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
  defer_triggers_ = on;
}

Stream::~Stream() {
  set_defer_triggers(false);
  release_exec();
  signal_pool().release(trigger_);
}

void Stream::release_exec() {
  std::lock_guard<std::mutex> lk(exec_mu_);
  released_ = true;
  exec_fast_.store(nullptr, std::memory_order_release);
  if (!exec_) return;
  // A native stream destroyed behind mpix's back (refused at every use since) has nothing left
  // to drain.
  Status st = exec_->check_live();
  if (st.is_ok()) st = exec_->synchronize();
  if (!st.is_ok())
    MPIX_LOG(warn, "stream", "synchronize at stream teardown: %s", st.what().c_str());
  exec_.reset();
}

uint64_t Stream::load_trigger_base() const {
  return __atomic_load_n(trigger_.word, __ATOMIC_ACQUIRE);
}

Status Stream::exec_make(ExecStream **out) {
  std::lock_guard<std::mutex> lk(exec_mu_);
  if (released_)
    return make_status(MPI_ERR_ARG, "stream %llu was freed (MPIX_Stream_free)",
                       static_cast<unsigned long long>(id_));
  if (!exec_) {
    // A general stream (MPI_INFO_NULL): a host stream of our own, made on first use.
    Backend *host = nullptr;
    MPIX_TRY(backend_get(StreamKind::host, &host));
    MPIX_TRY(host->open_stream(nullptr, TriggerMode::memop, &exec_));
    MPIX_LOG(debug, "stream", "stream %llu: made its host stream on first enqueue",
             static_cast<unsigned long long>(id_));
    exec_fast_.store(exec_.get(), std::memory_order_release);
  }
  *out = exec_.get();
  return exec_->check_live();
}

// The Runtime's table of live streams (MPIX_Stream handles).
class StreamRegistry {
 public:
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> live;
  uint64_t next_id = 1;
};

PartPtr<StreamRegistry> stream_registry_make() {
  return PartPtr<StreamRegistry>(new StreamRegistry);
}
void part_delete(StreamRegistry *r) { delete r; }

namespace {

// The registry of the last Runtime, kept after MPI_Finalize with the streams the program had
// not freed: MPIX_Stream_free needs no MPI, and a C++ wrapper may free its stream only after
// MPI_Finalize, as it could before the Runtime owned the registry.
std::atomic<StreamRegistry *> g_after_finalize{nullptr};

using Registry = StreamRegistry;
Registry &registry() { return runtime().streams(); }
// The Runtime's registry, or the one left after MPI_Finalize (null before runtime_init).
Registry *registry_for_handles() {
  Runtime *rt = runtime_current();
  return rt ? &rt->streams() : g_after_finalize.load(std::memory_order_acquire);
}

}  // namespace

void stream_registry_outlive(PartPtr<StreamRegistry> r) {
  g_after_finalize.store(r.get(), std::memory_order_release);
  runtime_keep_forever(std::shared_ptr<StreamRegistry>(std::move(r)));
}

uint64_t stream_new_id() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  // Ids are never reused, so a stale handle can never name a newer stream.
  return r.next_id++;
}

Status stream_register(std::shared_ptr<Stream> s, uint64_t *id) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  *id = s->id();
  r.live.emplace(s->id(), std::move(s));
  return {};
}

std::shared_ptr<Stream> stream_lookup(uint64_t id) {
  Registry *rp = registry_for_handles();
  if (!rp) return nullptr;
  Registry &r = *rp;
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.live.find(id);
  return it == r.live.end() ? nullptr : it->second;
}

Status stream_unregister(uint64_t id) {
  const Status not_live =
      make_status(MPI_ERR_ARG, "stream handle %#llx is not a live stream (freed twice?)",
                  static_cast<unsigned long long>(id));
  Registry *rp = registry_for_handles();
  if (!rp) return not_live;
  std::shared_ptr<Stream> victim;
  {
    // Ops whose wait the stream passed before they completed complete a moment later
    // (Stream::settle): a stream the user has just synchronised is not refused for them.
    std::shared_ptr<Stream> s;
    {
      std::lock_guard<std::mutex> lk(rp->mu);
      auto it = rp->live.find(id);
      if (it != rp->live.end()) s = it->second;
    }
    if (s) s->settle(std::chrono::milliseconds(100));
  }
  {
    Registry &r = *rp;
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.live.find(id);
    if (it == r.live.end()) return not_live;
    Stream &s = *it->second;
    if (s.pending_ops.load() > 0)
      return make_status(MPI_ERR_PENDING, "stream has %lld enqueued ops that have not completed",
                         static_cast<long long>(s.pending_ops.load()));
    if (s.attached_comms.load() > 0)
      return make_status(MPI_ERR_OTHER,
                         "stream is still used by %d stream communicator(s); free them first",
                         s.attached_comms.load());
    victim = std::move(it->second);
    r.live.erase(it);
  }
  // Outside the lock: drains the native stream. Ops that completed a moment ago may still hold
  // this object, but from here on nothing touches the native stream: the user may destroy it
  // (or a new stream may get its address) right after MPIX_Stream_free returns.
  victim->release_exec();
  victim.reset();
  return {};
}

void Stream::settle(std::chrono::milliseconds most) const {
  if (early_waits.load(std::memory_order_acquire) <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + most;
  while (early_waits.load(std::memory_order_acquire) > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void Stream::record_error(int code) {
  std::lock_guard<std::mutex> lk(err_mu_);
  if (err_code_ != MPI_SUCCESS) return;  // the first failure is the one reported
  err_code_ = code;
  err_unreported_.store(kErrSync | kErrWait);
}

int Stream::take_error_for(unsigned who) {
  if (!(err_unreported_.load(std::memory_order_relaxed) & who)) return MPI_SUCCESS;  // no lock
  std::lock_guard<std::mutex> lk(err_mu_);
  if (!(err_unreported_.fetch_and(~who) & who)) return MPI_SUCCESS;
  return err_code_;
}

int Stream::take_error() {
  std::lock_guard<std::mutex> lk(err_mu_);
  const int code = err_code_;
  err_code_ = MPI_SUCCESS;
  err_unreported_.store(0);
  return code;
}

}  // namespace mpix
