// The Runtime: one object that owns the engine's state. runtime_init makes it
// once MPI is usable; an attribute on MPI_COMM_SELF owns it, and its delete callback (MPI runs
// those first thing in MPI_Finalize) destroys it: that destruction is mpix's shutdown.
//
// Construction order, destroyed in reverse (~Runtime says what happens first):
//   MPI calls (core/mpi_calls.hpp) > providers (p2p and collective, chosen on first use) >
//   stream registry > request table > op registry > staging pool > op pool > spare pool > agent
//   (started on first use) > parts of the layers above the engine (queues, partitioned requests,
//   progress threads, ...), in the order they were first used.
// What must outlive it goes to runtime_keep_forever (~Runtime lists what and why).
// Process-wide, outside it (each says why where it is defined): settings and log, signal memory
// (base/signal_pool.hpp), the waiter's notifier, profile samples, MPI error codes
// (base/status.cpp), the stream backends, the host-stream handle set and the device-request
// table (they work without MPI, also after MPI_Finalize), the ofi context-id blocks.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.hpp"
#include "core/mpi_calls.hpp"

namespace mpix {

class Provider;
class Agent;
class OpRegistry;
class RequestTable;
class StreamRegistry;
class StagingPool;
class OpPool;

// The engine's parts are made and deleted beside their classes (in their .cpp files), so that
// this header needs none of them.
void part_delete(Agent *p);
void part_delete(OpRegistry *p);
void part_delete(RequestTable *p);
void part_delete(StreamRegistry *p);
void part_delete(StagingPool *p);
void part_delete(OpPool *p);
struct PartDelete {
  template <class T>
  void operator()(T *p) const {
    part_delete(p);
  }
};
template <class T>
using PartPtr = std::unique_ptr<T, PartDelete>;
PartPtr<OpRegistry> op_registry_make();
PartPtr<RequestTable> request_table_make();
PartPtr<StreamRegistry> stream_registry_make();
PartPtr<StagingPool> staging_pool_make();
PartPtr<OpPool> op_pool_make();
// Keeps @p r and the streams still in it past the Runtime, where MPIX_Stream_free finds them
// after MPI_Finalize (~Runtime says why).
void stream_registry_outlive(PartPtr<StreamRegistry> r);
// Starts the agent thread, which drives @p prov and the collective slot's @p coll (the same
// object where @p prov carries collectives; core/agent.cpp).
Status agent_make(Provider *prov, Provider *coll, PartPtr<Agent> *out);
// Stops the agent thread (joins it); the Agent stays until deleted.
void agent_join(Agent &a);

// A part owned by a layer above the engine: made on its first use (Runtime::part), destroyed
// in reverse order of making, after the agent thread stopped and before the engine's parts.
class RuntimePart {
 public:
  virtual ~RuntimePart() = default;
};

class Runtime {
 public:
  // @p mpi: MPI's calls (mpi_calls()) or a test's; @p provider: null to choose MPIX_PROVIDER on
  // first use (a given one fills the collective slot too). Makes no MPI call, starts no thread.
  Runtime(std::unique_ptr<MpiCalls> mpi, std::unique_ptr<Provider> provider);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  MpiCalls &mpi() { return *mpi_; }
  // The p2p provider, chosen (MPIX_PROVIDER) on first use; then inline, one load.
  Status provider(Provider **out) {
    if ((*out = provider_fast_.load(std::memory_order_acquire))) return {};
    return provider_choose_once(out);
  }
  // The collective slot's provider (the p2p one where that carries collectives).
  Status collective_provider(Provider **out) {
    if ((*out = coll_fast_.load(std::memory_order_acquire))) return {};
    return provider_choose_once(out, true);
  }
  std::string provider_reason();
  StreamRegistry &streams() { return *streams_; }
  RequestTable &requests() { return *requests_; }
  OpRegistry &ops() { return *ops_; }
  // Retired ops kept for reuse (core/op_pool.hpp); null once ~Runtime has let them go.
  OpPool *op_pool() const { return op_pool_fast_.load(std::memory_order_acquire); }
  // Retired ops that hold a spare request (Op::spare_request), for enqueues that return a
  // request; the agent fills it (op_make_spare). Null once ~Runtime has let them go.
  OpPool *spare_pool() const { return spare_pool_fast_.load(std::memory_order_acquire); }
  StagingPool &staging_pool() { return *staging_pool_; }
  // The agent, its thread started on first use (core/agent.cpp); null from agent_started()
  // before that.
  Status agent(Agent **out);
  Agent *agent_started() const { return agent_fast_.load(std::memory_order_acquire); }
  // Stops and joins the agent thread (again: a no-op). mpix's MPI_Finalize calls it before
  // PMPI_Finalize; ~Runtime, inside MPI_Finalize, otherwise.
  void stop_agent();

  // The part of type @p T (a RuntimePart), made on first use.
  template <class T>
  T &part() {
    return static_cast<T &>(find_part(&part_key<T>, []() -> RuntimePart * { return new T; }));
  }

 private:
  template <class T>
  static inline const char part_key = 0;  // its address names T's part
  RuntimePart &find_part(const void *key, RuntimePart *(*make)());
  // Chooses both providers' slots (once); *@p out: the p2p one, or the collective one.
  Status provider_choose_once(Provider **out, bool collective = false);

  std::unique_ptr<MpiCalls> mpi_;
  std::mutex provider_mu_;
  std::unique_ptr<Provider> provider_;
  std::atomic<Provider *> provider_fast_{nullptr};  // provider_ once chosen, read lock-free
  std::unique_ptr<Provider> coll_;  // the collective slot's, when provider_ carries none
  std::atomic<Provider *> coll_fast_{nullptr};  // coll_, or provider_ where that has them
  std::string provider_reason_;
  PartPtr<StreamRegistry> streams_;
  PartPtr<RequestTable> requests_;
  PartPtr<OpRegistry> ops_;
  PartPtr<StagingPool> staging_pool_;
  PartPtr<OpPool> op_pool_;
  std::atomic<OpPool *> op_pool_fast_{nullptr};  // op_pool_ until ~Runtime drops it
  PartPtr<OpPool> spare_pool_;
  std::atomic<OpPool *> spare_pool_fast_{nullptr};  // spare_pool_ until ~Runtime drops it
  std::mutex agent_mu_;
  PartPtr<Agent> agent_;
  std::atomic<Agent *> agent_fast_{nullptr};  // agent_, for the enqueue path's lock-free read
  std::mutex parts_mu_;
  std::vector<std::pair<const void *, std::unique_ptr<RuntimePart>>> parts_;  // in making order
};

namespace runtime_detail {
extern std::atomic<Runtime *> g_runtime;  // runtime_install's
}  // namespace runtime_detail
// The process's Runtime: null before runtime_init succeeded and after MPI_Finalize.
inline Runtime *runtime_current() {
  return runtime_detail::g_runtime.load(std::memory_order_acquire);
}
// The process's Runtime where one must exist (after runtime_init, before MPI_Finalize).
inline Runtime &runtime() { return *runtime_current(); }
// Makes @p rt the process's Runtime (runtime_init; the one-process unit test), or destroys the
// current one when @p rt is null (MPI_Finalize; the test). Not while another thread uses mpix.
void runtime_install(std::unique_ptr<Runtime> rt);

// The one place where what must outlive the Runtime is leaked on purpose (~Runtime and the
// parts' destructors say why for each): kept reachable until the process exits, never
// destroyed.
void runtime_keep_forever(std::shared_ptr<void> p);

// Checks the MPI library gave MPI_THREAD_MULTIPLE and every MPIX_* setting's value
// (settings_check), makes the Runtime and sets up the finalize hook. @p bad_setting (may be
// null): set to whether the failure is a bad setting (MPI itself is usable then).
Status runtime_init_slow(bool *bad_setting);
// Inline once made (every entry point calls it): one load.
inline Status runtime_init(bool *bad_setting = nullptr) {
  if (bad_setting) *bad_setting = false;
  if (runtime_current()) return {};
  return runtime_init_slow(bad_setting);
}

}  // namespace mpix
