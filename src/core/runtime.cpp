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
#include "core/stream_release.hpp"
#include "core/thread_level.hpp"
#include "core/type_probe.hpp"
#include "core/type_release.hpp"

namespace mpix {
namespace {

std::atomic<bool> g_ready{false};
std::mutex g_mu;
std::mutex g_at_fin_mu;
std::vector<void (*)()> g_at_finalize;

void on_finalize_body() {
  // Stop the agent first: an op whose completion the stream has already seen may still be in
  // the agent's hands for a moment (it writes the completion word, then lets the op go), and
  // would be reported as never retired.
  agent_stop();
  stream_release_run();  // streams the agent let go of (core/stream_release.hpp)
  type_release_run();
  std::size_t left = op_registry_report();
  if (left)
    MPIX_LOG(warn, "api", "MPI_Finalize: %zu enqueued op(s) never retired (listed above)", left);
  std::vector<void (*)()> fns;
  {
    std::lock_guard<std::mutex> lk(g_at_fin_mu);
    fns.swap(g_at_finalize);
  }
  for (auto fn : fns) fn();
  comm_ctx_release_keyval();
  profile_report();
  g_ready.store(false);
}

// Called by MPI (C) inside MPI_Finalize: no exception may leave it.
int on_finalize(MPI_Comm, int, void *, void *) {
  try {
    on_finalize_body();
    return MPI_SUCCESS;
  } catch (...) {
    MPIX_LOG(error, "api", "MPI_Finalize: mpix shutdown failed (exception)");
    return MPI_ERR_INTERN;
  }
}

}  // namespace

void runtime_at_finalize(void (*fn)()) {
  std::lock_guard<std::mutex> lk(g_at_fin_mu);
  g_at_finalize.push_back(fn);
}

Status runtime_init(bool *bad_setting) {
  if (bad_setting) *bad_setting = false;
  if (g_ready.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_ready.load()) return {};
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
  // Communicators mpix makes for itself, made now: no agent thread drives MPI yet.
  MPIX_TRY(type_probe_open());
  MPIX_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, kv, nullptr));
  // The attribute keeps the key alive until MPI_Finalize deletes it; then MPI frees the key.
  MPIX_MPI_CHECK(MPI_Comm_free_keyval(&kv));
  g_ready.store(true, std::memory_order_release);
  return {};
}

}  // namespace mpix
