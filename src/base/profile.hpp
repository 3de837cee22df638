// Where an enqueued op's time goes, as the agent sees it (MPIX_PROFILE=1). The agent stamps
// each op when it sees the stream's trigger, when the provider has posted it, when the provider
// reports it complete and when the completion word is written; per stream it also times the
// turnaround from a completion word written to the stream's next trigger seen (in a ping-pong:
// the stream's wait released, the kernel, the trigger write and its detection). Medians and
// 90th percentiles go to stderr at MPI_Finalize, and with MPIX_PROFILE_RAW every sample, in the
// order taken, to a file per stage. Off by default; when off it costs one branch.
#pragma once

#include <atomic>
#include <cstdint>

namespace mpix {

enum class ProfileStage { post, network, complete, turnaround, copy_out, copy_in, count_ };

namespace profile_detail {
// MPIX_PROFILE as read: 0 not yet, 1 off, 2 on. Inline readers: profile_enabled() runs in every
// enqueue call, where a call into the library and a guarded static cost ~10 instructions.
extern std::atomic<int> g_state;
int read_state();  // reads the setting, stores and returns 1 or 2
void count_enqueue_call();
}  // namespace profile_detail

inline bool profile_enabled() {
  const int s = profile_detail::g_state.load(std::memory_order_relaxed);
  return (s ? s : profile_detail::read_state()) == 2;
}
uint64_t profile_now_ns();
// Agent thread only.
void profile_record(ProfileStage s, uint64_t ns);
// Prints the stage statistics and the GPU runtime calls (once the agent has stopped).
void profile_report();

// The GPU runtime calls mpix makes, by kind: counted and timed under MPIX_PROFILE, apart for
// the application's threads (inside mpix calls) and mpix's own threads (the agent, host-stream
// workers, progress threads: name_this_thread marks them), so that an enqueue call's host time
// can be split into the driver's share and mpix's own.
enum class GpuCall {
  pointer_query,  // cudaPointerGetAttributes, cuPointerGetAttributes (and HIP's)
  stream_memop,   // stream memory operations: a write, a wait, a batch
  kernel_launch,  // mpix's own kernels
  copy,           // cudaMemcpyAsync, cudaMemcpy2DAsync
  host_function,  // cudaLaunchHostFunc
  other,          // the current device asked or set, a stream's capture state
  count_
};
// Any thread: one call of kind @p k that took @p ns.
void profile_gpu_call(GpuCall k, uint64_t ns);
// Calls and nanoseconds so far of kind @p k on mpix's threads (@p mpix_threads) or the others.
void profile_gpu_calls(bool mpix_threads, GpuCall k, uint64_t *calls, uint64_t *ns);
// The calling thread is one of mpix's own (name_this_thread).
void profile_mark_mpix_thread();
// Any thread: an MPIX_*_enqueue call (for the report's per-call averages).
inline void profile_note_enqueue_call() {
  if (profile_enabled()) profile_detail::count_enqueue_call();
}

// The parts of an enqueue call of one op (MPIX_*_enqueue), timed on the calling thread under
// MPIX_PROFILE: where its host time goes besides the GPU calls above. make: the op, its
// datatype and the provider's checks; staging: which buffers are staged, the bounce buffers, the
// stager (pointer queries included); request: its generalized request; submit: the stream's
// enqueue lock and threshold, the provider's arm, the hand-off to the agent; trigger: the
// stream work of the op (a staged copy out, the trigger write, or their deferral; a blocking
// call's wait too).
enum class EnqueuePart { make, staging, request, submit, trigger, count_ };
// Whose parts: sends, receives, the other ops (collectives).
enum class EnqueueKind { send, recv, other, count_ };
// Any thread: @p ns of part @p p of an enqueue call of kind @p k.
void profile_enqueue_part(EnqueueKind k, EnqueuePart p, uint64_t ns);
// Calls and nanoseconds so far of part @p p of kind @p k's enqueue calls.
void profile_enqueue_parts(EnqueueKind k, EnqueuePart p, uint64_t *calls, uint64_t *ns);

// Times the parts of one enqueue call: start() where profiling is on, then each mark() ends one
// part and starts the next (a mark of a clock never started records nothing).
class EnqueueClock {
 public:
  void start(EnqueueKind k) {
    k_ = k;
    t_ = profile_now_ns();
  }
  void mark(EnqueuePart p) {
    if (!t_) return;
    const uint64_t now = profile_now_ns();
    profile_enqueue_part(k_, p, now - t_);
    t_ = now;
  }

 private:
  EnqueueKind k_ = EnqueueKind::other;
  uint64_t t_ = 0;
};

// Times its scope as one GPU runtime call of kind @p k; one branch when profiling is off.
class GpuCallTimer {
 public:
  explicit GpuCallTimer(GpuCall k) : k_(k), t0_(profile_enabled() ? profile_now_ns() : 0) {}
  ~GpuCallTimer() {
    if (t0_) profile_gpu_call(k_, profile_now_ns() - t0_);
  }
  GpuCallTimer(const GpuCallTimer &) = delete;
  GpuCallTimer &operator=(const GpuCallTimer &) = delete;

 private:
  GpuCall k_;
  uint64_t t0_;
};

}  // namespace mpix
