// An mpix stream: a native stream (host, CUDA, HIP; or none for a general stream) plus its
// monotonic trigger sequence. The MPIX_Stream handle the user holds is an id into a registry,
// never a pointer, so a freed or forged handle is detected rather than dereferenced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "base/futex_lock.hpp"
#include "base/signal_pool.hpp"
#include "base/wait_order.hpp"
#include "gpu/backend.hpp"

namespace mpix {

class Stream {
 public:
  Stream(uint64_t id, StreamKind kind, Backend *backend, std::unique_ptr<ExecStream> exec);
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  uint64_t id() const { return id_; }
  StreamKind kind() const { return kind_; }
  Backend *backend() const { return backend_; }
  // staging_possible(*backend()), asked once (core/stager.hpp): whether an op of this stream
  // may have buffers to stage (a host stream's host buffers never do).
  bool may_stage() const { return may_stage_; }
  // The executing stream; a general stream makes a host stream on first use. Fails once the
  // stream was released. Inline once made (every enqueue asks).
  Status exec(ExecStream **out) {
    // Enqueuing while another thread frees the stream is erroneous, so a pointer read here just
    // before release_exec() is no worse than one returned by the locked path just before it.
    if ((*out = exec_fast_.load(std::memory_order_acquire))) return (*out)->check_live();
    return exec_make(out);
  }
  // MPIX_Stream_free: drains and lets go of the native stream, so that mpix never touches it
  // again even while completed ops still hold this object.
  void release_exec();

  // Serialises enqueues so that threshold order equals stream order. Taken on every enqueue
  // and held across stream operations: a FutexLock (base/futex_lock.hpp).
  FutexLock &enqueue_mutex() { return enqueue_mu_; }
  // Next trigger threshold (call with enqueue_mutex held).
  uint64_t next_threshold() { return ++last_threshold_; }
  // The threshold the next op will get, without taking it (call with enqueue_mutex held).
  uint64_t peek_next_threshold() const { return last_threshold_ + 1; }
  uint64_t *trigger_word() const { return trigger_.word; }
  // The stream's pending waits on mpix requests (MPIX_Wait_enqueue & co., blocking enqueues,
  // queue waits), noted in stream order as they are queued (with enqueue_mutex held); read by
  // the agent. Waits of partitioned requests and the program's own waits are not in it.
  WaitOrder &wait_order() { return wait_order_; }

  // Deferred triggers (info key mpix_defer_trigger / MPIX_DEFER_TRIGGER): a nonblocking op's
  // trigger is not written at once but with the stream's next mpix operation that needs the
  // stream to go on, so that the sends and receives of one exchange cost one stream write.
  // Legal because MPI forbids touching a nonblocking op's buffer before its completion, which
  // in stream order comes after that write. Call these with enqueue_mutex held.
  void set_defer_triggers(bool on);
  // Whether any stream of the process defers its triggers (host waits then look for them:
  // flush_deferred_for_host_wait). One relaxed load.
  static bool any_defers() { return deferring_streams_.load(std::memory_order_relaxed) > 0; }
  bool defers_triggers() const { return defer_triggers_; }
  void defer_trigger(uint64_t threshold) { deferred_ = threshold; }
  // The deferred threshold to write now (0: none); a later write covers it, so it is cleared.
  // Where copies out are deferred too (deferred_copies), they must run first: flush_deferred_
  // trigger (core/enqueue.hpp) does both.
  uint64_t take_deferred() {
    const uint64_t t = deferred_;
    deferred_ = 0;
    return t;
  }
  // A deferred nonblocking send's copy out of device memory (a dense piece one kernel copies):
  // made with the deferred trigger, before it, by the same kernel where the stream can
  // (ExecStream::copies_then_write, or the fused receive of the next MPIX_Waitall_enqueue);
  // false when as many are held as one kernel copies (ExecStream::kMaxPreCopies): flush first.
  static constexpr std::size_t kMaxDeferredCopies = ExecStream::kMaxPreCopies;
  bool defer_copy(const CopyPiece &p) {
    if (ncopies_ == kMaxDeferredCopies) return false;
    copies_[ncopies_++] = p;
    return true;
  }
  std::size_t deferred_copies() const { return ncopies_; }
  const CopyPiece *deferred_copy_list() const { return copies_; }
  void clear_deferred_copies() { ncopies_ = 0; }

  // Whether host-side MPI calls ordered after the stream (plain MPI calls on its stream
  // communicators, MPIX_Stream_send & co. on a multiplex communicator) synchronise it first:
  // by default for GPU streams (as MPICH orders plain calls on a GPU-stream communicator), not
  // for host streams; info key mpix_sync_plain_calls. Set before the stream is shared.
  void set_sync_plain_calls(bool on) { sync_plain_ = on; }
  bool syncs_plain_calls() const { return sync_plain_; }

  // Asynchronous failures of blocking ops (MPIX_Send_enqueue & co. have no request to report
  // them through): the first one's error code is kept. The next MPIX_Stream_synchronize and the
  // next host wait on a request of the stream each report it once; MPIX_Stream_get_error
  // returns it and clears it. Any thread.
  void record_error(int code);
  int take_sync_error() { return take_error_for(kErrSync); }
  int take_wait_error() { return take_error_for(kErrWait); }
  int take_error();

  std::atomic<int64_t> pending_ops{0};  // enqueued and not yet complete
  std::atomic<int> attached_comms{0};   // stream communicators using it
  // Ops not yet complete whose wait the stream may pass first (op_note_early_wait): a GPU-direct
  // send whose receiver's copy released the wait completes only on the answer, microseconds
  // later. settle() waits, at most @p most, until there are none: after a synchronize (the
  // stream passed their waits, so they are over but for the answer) before anything the user
  // may read as "every op done" (pending counts: MPI_Comm_free, MPIX_Stream_free, errors).
  std::atomic<int64_t> early_waits{0};
  void settle(std::chrono::milliseconds most) const;

 private:
  WaitOrder wait_order_;
  uint64_t load_trigger_base() const;
  enum : unsigned { kErrSync = 1u, kErrWait = 2u };
  int take_error_for(unsigned who);

  uint64_t id_;
  StreamKind kind_;
  Backend *backend_;
  bool may_stage_;
  std::mutex exec_mu_;
  std::unique_ptr<ExecStream> exec_;
  // exec_.get() once made, until released: exec()'s lock-free read on the enqueue path.
  std::atomic<ExecStream *> exec_fast_{nullptr};
  Status exec_make(ExecStream **out);  // exec()'s locked path
  bool released_ = false;              // guarded by exec_mu_
  FutexLock enqueue_mu_;
  uint64_t last_threshold_ = 0;
  bool defer_triggers_ = false;
  static std::atomic<int> deferring_streams_;  // streams with defer_triggers_ set
  bool sync_plain_ = false;
  uint64_t deferred_ = 0;  // highest threshold armed but not yet written to the stream
  CopyPiece copies_[kMaxDeferredCopies] = {};  // deferred copies out (defer_copy), ncopies_ of them
  std::size_t ncopies_ = 0;
  SignalWord trigger_;
  std::atomic<unsigned> err_unreported_{0};  // kErrSync | kErrWait: who has not reported it
  std::mutex err_mu_;
  int err_code_ = 0;  // guarded by err_mu_ (MPI_SUCCESS: none)
};

// A new stream, owned through shared_ptrs whose deleter keeps its teardown off the agent
// thread (core/stream_release.hpp).
std::shared_ptr<Stream> make_stream(uint64_t id, StreamKind kind, Backend *backend,
                                    std::unique_ptr<ExecStream> exec);

// Handle registry.
Status stream_register(std::shared_ptr<Stream> s, uint64_t *id);
std::shared_ptr<Stream> stream_lookup(uint64_t id);
// Removes the handle; fails (and keeps it) if ops are pending or communicators use it.
Status stream_unregister(uint64_t id);
uint64_t stream_new_id();

}  // namespace mpix
