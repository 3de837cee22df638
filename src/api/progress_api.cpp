// C entry points: MPIX_Stream_progress, MPIX_Start_progress_thread, MPIX_Stop_progress_thread
// (MPICH 4.2). mpix's agent thread drives every enqueued op whatever the caller does, so these
// are for codes written for MPICH: a progress call pokes the MPI library's progress engine
// (a nonblocking probe on MPI_COMM_SELF, which matches nothing and consumes nothing) and, from
// the caller's thread, writes the stream's deferred trigger (MPIX_DEFER_TRIGGER) so that ops
// armed so far fire. A progress thread makes the same poke in a loop, with a short sleep (it
// never touches the stream: a thread of mpix's own inserting stream work at arbitrary points
// would race with, e.g., a stream capture of the caller's).
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "api/errors.hpp"
#include "api/stream_handle.hpp"
#include "base/internal_thread.hpp"
#include "core/enqueue.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"

namespace mpix {
namespace {

Status poke_mpi() {
  int flag = 0;
  const int rc = PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return mpi_status(rc, "MPI_Iprobe(MPI_COMM_SELF)", __FILE__, __LINE__);
  return {};
}

Status mpi_ready() {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized)
    return make_status(MPI_ERR_OTHER, "MPI is not initialised (or already finalised)");
  return {};
}

Status stream_progress(MPIX_Stream h) {
  MPIX_TRY(mpi_ready());
  if (h != MPIX_STREAM_NULL) {
    std::shared_ptr<Stream> s;
    MPIX_TRY(find_stream(h, &s));
    ExecStream *ex = nullptr;
    if (s->kind() != StreamKind::general && s->exec(&ex).is_ok()) {
      std::lock_guard<FutexLock> lk(s->enqueue_mutex());
      MPIX_TRY(flush_deferred_trigger(*s, *ex));
    }
  }
  return poke_mpi();
}

struct ProgressThread {
  std::shared_ptr<Stream> stream;  // keeps the stream object (not its handle) alive
  std::atomic<bool> stop{false};
  std::thread thread;
  void run() {
    InternalScope internal;
    name_this_thread("mpix-progress");
    while (!stop.load(std::memory_order_acquire)) {
      if (!poke_mpi().is_ok()) break;  // logged by mpi_status; MPI is going away
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
};

void stop_thread(std::unique_ptr<ProgressThread> t) {
  t->stop.store(true, std::memory_order_release);
  if (t->thread.joinable()) t->thread.join();
}

// The Runtime's progress threads: destroying it (at MPI_Finalize) stops those still running.
struct ProgressThreads final : RuntimePart {
  std::mutex mu;
  std::map<uint64_t, std::unique_ptr<ProgressThread>> live;  // by stream id (0: NULL)

  // Before MPI_Finalize (the wrapper below) and, if that was not linked in, inside it: threads
  // still running are stopped before MPI goes away.
  void stop_all() {
    std::map<uint64_t, std::unique_ptr<ProgressThread>> all;
    {
      std::lock_guard<std::mutex> lk(mu);
      all.swap(live);
    }
    for (auto &kv : all) stop_thread(std::move(kv.second));
  }
  ~ProgressThreads() override { stop_all(); }
};

Status key_of(MPIX_Stream h, uint64_t *key, std::shared_ptr<Stream> *s) {
  *key = 0;
  if (h == MPIX_STREAM_NULL) return {};
  MPIX_TRY(find_stream(h, s));
  *key = (*s)->id();
  return {};
}

Status start_progress_thread(MPIX_Stream h) {
  MPIX_TRY(mpi_ready());
  MPIX_TRY(runtime_init());  // MPI_THREAD_MULTIPLE, and the Runtime that stops the threads
  uint64_t key = 0;
  std::shared_ptr<Stream> s;
  MPIX_TRY(key_of(h, &key, &s));
  ProgressThreads &all = runtime().part<ProgressThreads>();
  std::lock_guard<std::mutex> lk(all.mu);
  if (all.live.count(key)) return {};  // already running: as MPICH, nothing more
  auto t = std::make_unique<ProgressThread>();
  t->stream = std::move(s);
  ProgressThread *p = t.get();
  t->thread = std::thread([p] { p->run(); });  // std::system_error: MPI_ERR_OTHER (api_guard)
  all.live.emplace(key, std::move(t));
  return {};
}

Status stop_progress_thread(MPIX_Stream h) {
  uint64_t key = 0;
  std::shared_ptr<Stream> s;
  MPIX_TRY(key_of(h, &key, &s));
  Runtime *rt = runtime_current();
  if (!rt) return {};  // none running: as MPICH, nothing to do
  ProgressThreads &all = rt->part<ProgressThreads>();
  std::unique_ptr<ProgressThread> t;
  {
    std::lock_guard<std::mutex> lk(all.mu);
    auto it = all.live.find(key);
    if (it == all.live.end()) return {};  // none running: as MPICH, nothing to do
    t = std::move(it->second);
    all.live.erase(it);
  }
  stop_thread(std::move(t));
  return {};
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Stream_progress(MPIX_Stream stream) {
  return api_guard("MPIX_Stream_progress", [&]() -> int {
    return finish(MPI_COMM_NULL, "MPIX_Stream_progress", stream_progress(stream));
  });
}

int MPIX_Start_progress_thread(MPIX_Stream stream) {
  return api_guard("MPIX_Start_progress_thread", [&]() -> int {
    return finish(MPI_COMM_NULL, "MPIX_Start_progress_thread", start_progress_thread(stream));
  });
}

// Progress threads still running, and the agent, are stopped before MPI_Finalize starts
// (profiling interface; link libmpix before libmpi, as for MPI_Init). Stopping them only inside
// MPI_Finalize (the Runtime's teardown, kept for programs linked the other way) is too late for
// MPICH 4.0: a thread that polled while its finalize had begun left its global mutex busy (it
// then fails an assertion destroying it: partitioned_finalize_report_np2 failed so in about 1
// run in 6 under MPICH, with a receive still posted by the agent).
int MPI_Finalize(void) {
  try {
    if (Runtime *rt = runtime_current()) {
      rt->part<ProgressThreads>().stop_all();
      rt->stop_agent();
    }
  } catch (...) {
    // a thread that cannot be joined: nothing better to do than to go on finalising
  }
  return PMPI_Finalize();
}

int MPIX_Stop_progress_thread(MPIX_Stream stream) {
  return api_guard("MPIX_Stop_progress_thread", [&]() -> int {
    return finish(MPI_COMM_NULL, "MPIX_Stop_progress_thread", stop_progress_thread(stream));
  });
}

}  // extern "C"
