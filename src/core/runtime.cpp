#include "core/runtime.hpp"

#include <atomic>
#include <mutex>
#include <vector>

#include "base/log.hpp"
#include "base/profile.hpp"
#include "base/settings.hpp"
#include "base/signal_pool.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/op.hpp"
#include "core/op_pool.hpp"
#include "core/provider.hpp"
#include "core/stream.hpp"
#include "core/stream_release.hpp"
#include "core/thread_level.hpp"
#include "core/type_probe.hpp"
#include "core/type_release.hpp"

namespace mpix {
std::atomic<Runtime *> runtime_detail::g_runtime{nullptr};
namespace {

using runtime_detail::g_runtime;
std::mutex g_init_mu;  // runtime_init and runtime_install

// Called by MPI (C) inside MPI_Finalize: no exception may leave it.
int on_finalize(MPI_Comm, int, void *, void *) {
  try {
    runtime_install(nullptr);
    return MPI_SUCCESS;
  } catch (...) {
    MPIX_LOG(error, "api", "MPI_Finalize: mpix shutdown failed (exception)");
    return MPI_ERR_INTERN;
  }
}

}  // namespace

Runtime::Runtime(std::unique_ptr<MpiCalls> mpi, std::unique_ptr<Provider> provider)
    : mpi_(std::move(mpi)),
      provider_(std::move(provider)),
      streams_(stream_registry_make()),
      requests_(request_table_make()),
      ops_(op_registry_make()),
      staging_pool_(staging_pool_make()),
      op_pool_(op_pool_make()),
      spare_pool_(op_pool_make()) {
  if (provider_) provider_reason_ = "given to the Runtime";
  op_pool_fast_.store(op_pool_.get(), std::memory_order_release);
  spare_pool_fast_.store(spare_pool_.get(), std::memory_order_release);
}

void Runtime::stop_agent() {
  g_agent_running.store(false, std::memory_order_release);
  agent_fast_.store(nullptr, std::memory_order_release);
  if (agent_) agent_join(*agent_);
}

Runtime::~Runtime() {
  // First the agent thread stops: nothing is destroyed under a running thread, and an op whose
  // completion the stream has already seen may still be in the agent's hands for a moment (it
  // writes the completion word, then lets the op go) and would be reported as never retired.
  stop_agent();
  // The provider drops its resources now that nothing drives it: ofi closes its endpoint, so
  // that libfabric's shm unlinks its shared-memory region.
  provider_fast_.store(nullptr, std::memory_order_release);
  coll_fast_.store(nullptr, std::memory_order_release);
  if (provider_) provider_->shutdown();
  if (coll_) coll_->shutdown();
  stream_release_run();  // streams the agent let go of (core/stream_release.hpp)
  type_release_run();
  const std::size_t left = op_registry_report(*ops_);
  if (left)
    MPIX_LOG(warn, "api", "MPI_Finalize: %zu enqueued op(s) never retired (listed above)", left);
  // The layers above the engine, in reverse order of making (each part's destructor is its
  // shutdown: progress threads stop, keys and communicators are freed, reports are logged).
  for (;;) {
    std::unique_ptr<RuntimePart> last;  // destroyed outside parts_mu_: it may look up others
    {
      std::lock_guard<std::mutex> lk(parts_mu_);
      if (parts_.empty()) break;
      last = std::move(parts_.back().second);
      parts_.pop_back();
    }
  }
  comm_ctx_release_keyval();
  profile_report();
  agent_.reset();
  // The ops kept for reuse are deleted (an op retired from now on is deleted at once), their
  // spare requests completed and freed (MPI is still usable here).
  spare_pool_fast_.store(nullptr, std::memory_order_release);
  spare_pool_.reset();
  op_pool_fast_.store(nullptr, std::memory_order_release);
  op_pool_.reset();

  // What outlives the Runtime, leaked on purpose here and nowhere else:
  // * the providers: communicators whose attributes MPI deletes later in MPI_Finalize (those of
  //   MPI_COMM_WORLD go after MPI_COMM_SELF's) still hold their ProviderComms, which refer to
  //   them;
  // * the staging pool: a device stream may still copy to or from a bounce buffer it holds
  //   (an op never completed), and pinned memory is mapped into the device;
  // * the stream registry, with the streams never freed (stream_registry_outlive): a native
  //   stream may still wait for an op that will never complete, so synchronising it at
  //   teardown would hang; and MPIX_Stream_free, which needs no MPI, still frees them after
  //   MPI_Finalize (a C++ wrapper may free its stream then);
  // * ops never retired, with their registry (reported above): a stream may still wait on their
  //   completion words, which come from the process-wide signal pool (never freed either).
  if (provider_) runtime_keep_forever(std::shared_ptr<Provider>(std::move(provider_)));
  if (coll_) runtime_keep_forever(std::shared_ptr<Provider>(std::move(coll_)));
  runtime_keep_forever(std::shared_ptr<StagingPool>(std::move(staging_pool_)));
  stream_registry_outlive(std::move(streams_));
  if (op_registry_size(*ops_)) runtime_keep_forever(std::shared_ptr<OpRegistry>(std::move(ops_)));
}

PartPtr<OpPool> op_pool_make() { return PartPtr<OpPool>(new OpPool); }
void part_delete(OpPool *p) { delete p; }

// The slow part of provider() / collective_provider(): every enqueue asks; the providers never
// change once chosen.
Status Runtime::provider_choose_once(Provider **out, bool collective) {
  std::lock_guard<std::mutex> lk(provider_mu_);
  if (!provider_) {
    std::unique_ptr<Provider> p2p, coll;
    MPIX_TRY(provider_choose(&p2p, &provider_reason_));
    MPIX_TRY(collective_provider_choose(*p2p, &coll));
    provider_ = std::move(p2p);
    coll_ = std::move(coll);
    MPIX_LOG(info, "api", "provider %s (%s)", provider_->name(), provider_reason_.c_str());
    if (coll_) MPIX_LOG(debug, "api", "collectives: provider %s", coll_->name());
  }
  coll_fast_.store(coll_ ? coll_.get() : provider_.get(), std::memory_order_release);
  provider_fast_.store(provider_.get(), std::memory_order_release);
  *out = collective ? coll_fast_.load(std::memory_order_relaxed) : provider_.get();
  return {};
}

std::string Runtime::provider_reason() {
  std::lock_guard<std::mutex> lk(provider_mu_);
  return provider_reason_;
}

Status Runtime::agent(Agent **out) {
  if ((*out = agent_fast_.load(std::memory_order_acquire))) return {};
  std::lock_guard<std::mutex> lk(agent_mu_);
  if (!agent_) {
    Provider *prov = nullptr, *coll = nullptr;
    MPIX_TRY(provider(&prov));
    MPIX_TRY(collective_provider(&coll));
    MPIX_TRY(agent_make(prov, coll, &agent_));
    agent_fast_.store(agent_.get(), std::memory_order_release);
    MPIX_LOG(debug, "agent", "started (provider %s)", prov->name());
  }
  *out = agent_.get();
  return {};
}

RuntimePart &Runtime::find_part(const void *key, RuntimePart *(*make)()) {
  std::lock_guard<std::mutex> lk(parts_mu_);
  for (auto &p : parts_)
    if (p.first == key) return *p.second;
  parts_.emplace_back(key, std::unique_ptr<RuntimePart>(make()));
  return *parts_.back().second;
}

Status provider_get(Provider **out) {
  Runtime *rt = runtime_current();
  if (!rt) return make_status(MPI_ERR_OTHER, "mpix is not initialised (or MPI was finalised)");
  return rt->provider(out);
}

Status provider_for(OpKind kind, Provider **out) {
  Runtime *rt = runtime_current();
  if (!rt) return make_status(MPI_ERR_OTHER, "mpix is not initialised (or MPI was finalised)");
  return kind == OpKind::allreduce ? rt->collective_provider(out) : rt->provider(out);
}

std::string provider_choice_reason() {
  Runtime *rt = runtime_current();
  return rt ? rt->provider_reason() : std::string();
}

void runtime_keep_forever(std::shared_ptr<void> p) {
  static std::mutex mu;
  // Never destroyed (it outlives static destruction too); reachable, so that LeakSanitizer
  // does not report what it holds.
  static auto *kept = new std::vector<std::shared_ptr<void>>;
  std::lock_guard<std::mutex> lk(mu);
  kept->push_back(std::move(p));
}

namespace {
// Call with g_init_mu held.
void install_locked(std::unique_ptr<Runtime> rt) {
  // The old one is destroyed while runtime_current() still names it: its parts' teardown goes
  // through the engine's free functions, which find the engine there.
  delete g_runtime.load(std::memory_order_relaxed);
  g_runtime.store(rt.release(), std::memory_order_release);
}
}  // namespace

void runtime_install(std::unique_ptr<Runtime> rt) {
  std::lock_guard<std::mutex> lk(g_init_mu);
  install_locked(std::move(rt));
}

Status runtime_init_slow(bool *bad_setting) {
  std::lock_guard<std::mutex> lk(g_init_mu);
  if (runtime_current()) return {};
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return make_status(MPI_ERR_OTHER, "MPI is %s; mpix calls need an initialised MPI",
                       finalized ? "already finalised" : "not initialised");
  // The library's own answer: mpix's MPI_Query_thread reports what the application asked for.
  int level = MPI_THREAD_SINGLE;
  MPIX_MPI_CHECK(PMPI_Query_thread(&level));
  if (level != MPI_THREAD_MULTIPLE) {
    if (thread_level_wrapped())
      return make_status(MPI_ERR_OTHER,
                         "the MPI library gives %s at most; mpix needs MPI_THREAD_MULTIPLE (its "
                         "agent thread calls MPI): use an MPI library built with thread support",
                         thread_level_name(level));
    return make_status(MPI_ERR_OTHER,
                       "MPI was initialised with %s, not through mpix's MPI_Init (libmpix must "
                       "come before libmpi on the link line), and mpix needs "
                       "MPI_THREAD_MULTIPLE: its agent thread calls MPI (or initialise with "
                       "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...))",
                       thread_level_name(level));
  }
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log_set_rank(rank);
  // Every MPIX_* value checked before anything uses one; a bad one fails every mpix call (this
  // stays unready), so no part of mpix runs with a value it silently replaced.
  const Status &settings = settings_check();
  if (!settings.is_ok()) {
    if (bad_setting) *bad_setting = true;
    return settings;
  }
  int kv = MPI_KEYVAL_INVALID;
  MPIX_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &kv, nullptr));
  auto rt = std::make_unique<Runtime>(mpi_calls(), nullptr);
  // Communicators mpix makes for itself, made now: no agent thread drives MPI yet.
  MPIX_TRY(type_probe_open(*rt));
  MPIX_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, kv, nullptr));
  // The attribute keeps the key alive until MPI_Finalize deletes it; then MPI frees the key.
  MPIX_MPI_CHECK(MPI_Comm_free_keyval(&kv));
  install_locked(std::move(rt));
  return {};
}

}  // namespace mpix
