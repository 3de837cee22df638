// Stream backend "host": mpix host streams. Always built; it is what runs (and is tested) on
// machines without a GPU, and what a general stream (MPI_INFO_NULL) executes on.
#include "gpu/host/host_backend.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "base/signal_pool.hpp"
#include "base/waiter.hpp"
#include "gpu/backend.hpp"
#include "gpu/backend_entry.hpp"
#include "gpu/gpu_settings.hpp"
#include "gpu/host/host_ipc.hpp"
#include "mpix/mpix_host_stream.h"

namespace mpix {
namespace {

class HostExecStream final : public ExecStream {
 public:
  HostExecStream(mpix_host_stream_t s, bool owned) : s_(s), owned_(owned) {}
  ~HostExecStream() override {
    if (owned_) mpix_host_stream_destroy(&s_);
  }

  // The memory operations check liveness through check_live's cached answer, not the set
  // lookup the public host-stream calls make: the enqueue path writes once or twice a call.
  Status write_value(uint64_t *word, uint64_t value) override {
    return check(live() ? host_stream_push_one_live(s_, false, word, value) : MPI_ERR_ARG,
                 "write_value64");
  }
  Status wait_value(const uint64_t *word, uint64_t value) override {
    return check(live() ? host_stream_push_one_live(s_, true, const_cast<uint64_t *>(word), value)
                        : MPI_ERR_ARG,
                 "wait_value64");
  }
  // One lock and one wake-up for the batch (a Waitall's waits) instead of one per operation.
  Status batch(const StreamMemOp *ops, std::size_t n) override {
    return check(live() ? host_stream_push_memops_live(s_, ops, n) : MPI_ERR_ARG, "batch");
  }
  Status launch_host(void (*fn)(void *), void *arg) override {
    return check(mpix_host_stream_launch(s_, fn, arg), "launch");
  }
  Status copy_async(void *dst, const void *src, std::size_t bytes) override {
    struct Copy {
      void *dst;
      const void *src;
      std::size_t n;
    };
    auto *c = new Copy{dst, src, bytes};
    return check(mpix_host_stream_launch(
                     s_,
                     [](void *p) {
                       auto *c = static_cast<Copy *>(p);
                       std::memcpy(c->dst, c->src, c->n);
                       delete c;
                     },
                     c),
                 "launch(copy)");
  }
  // One host function for the whole table (the table outlives the copy: the caller's contract).
  Status copy_runs_async(void *dst, const void *src, const CopyRun *runs, std::size_t n) override {
    struct Copy {
      void *dst;
      const void *src;
      const CopyRun *runs;
      std::size_t n;
    };
    auto c = std::make_unique<Copy>(Copy{dst, src, runs, n});
    int rc = mpix_host_stream_launch(
        s_,
        [](void *p) {
          std::unique_ptr<Copy> c(static_cast<Copy *>(p));
          for (std::size_t i = 0; i < c->n; ++i)
            for (uint64_t k = 0; k < c->runs[i].count; ++k) {
              const uint64_t off = c->runs[i].offset + k * c->runs[i].stride;
              std::memcpy(static_cast<char *>(c->dst) + off,
                          static_cast<const char *>(c->src) + off, c->runs[i].len);
            }
        },
        c.get());
    if (rc == 0) c.release();  // the host function owns it now
    return check(rc, "launch(copy_runs)");
  }
  bool can_copy_prefix_staged(int) override { return true; }
  // MPIX_HOST_FUSE (tests): the fused paths a CUDA stream takes, each done by the base class as
  // the items it stands for (ExecStream::copy_then_write, wait_then_copy_prefix, ...).
  static bool fuse_on() {
    static const bool on = std::strcmp(setting_str(GpuSetting::host_fuse), "on") == 0;
    return on;
  }
  bool can_fuse_copy(const void *, const void *, std::size_t bytes) override {
    return fuse_on() && bytes <= kMaxFusedCopy;
  }
  bool can_fuse_staged(std::size_t bytes, int) override {
    return can_fuse_copy(nullptr, nullptr, bytes);
  }
  // A Waitall's fused receives in one operation: here each its own wait_then_copy_prefix (the
  // base class), so that the grouping runs in CI as a CUDA stream's one kernel groups them.
  bool fuses_many(std::size_t max_bytes) const override {
    return fuse_on() && max_bytes <= kMaxFusedCopy;
  }
  // The worker takes a batched wait's alt_word (host_stream.cpp): with MPIX_HOST_IPC (tests), a
  // GPU-direct send is completed by its receiver's copy as on a CUDA stream (ipc_path.hpp,
  // "Completion on the GPU"), so that the protocol runs in CI.
  bool waits_either() const override { return host_ipc_on(); }
  Status copy_prefix_async(void *dst, const void *src, std::size_t max_bytes,
                           const uint64_t *len_word, uint64_t skip, bool gated) override {
    (void)gated;  // the host function waits for the gate word (copy_by_length)
    auto c = std::make_unique<Copy>(Copy{dst, src, max_bytes, len_word, skip, nullptr, 0, 0});
    int rc = mpix_host_stream_launch(
        s_,
        [](void *p) {
          std::unique_ptr<Copy> c(static_cast<Copy *>(p));
          copy_by_length(*c);
        },
        c.get());
    if (rc == 0) c.release();  // the host function owns it now
    return check(rc, "launch(copy_prefix)");
  }
  // MPIX_HOST_FUSE (tests; the only way here): a tiny receive's fused wait and copy in polls its
  // flagged words beside the completion word, as the CUDA kernel does (gpu/backend.hpp,
  // TinyWords), so that the protocol runs in CI; larger ones wait, then copy by length.
  Status wait_then_copy_prefix(const uint64_t *word, uint64_t value, void *dst, const void *src,
                               std::size_t max_bytes, const uint64_t *len_word, uint32_t tiny_flag,
                               const StreamMemOp *then, std::size_t nthen,
                               const PreWork *pre) override {
    if (max_bytes > TinyWords::kBytes || !len_word || !tiny_flag)
      return ExecStream::wait_then_copy_prefix(word, value, dst, src, max_bytes, len_word,
                                               tiny_flag, then, nthen, pre);
    if (pre) MPIX_TRY(run_pre(*pre));
    auto c = std::make_unique<Copy>(Copy{dst, src, max_bytes, len_word, 0, word, value, tiny_flag});
    int rc = mpix_host_stream_launch(
        s_,
        [](void *p) {
          std::unique_ptr<Copy> c(static_cast<Copy *>(p));
          wait_tiny_and_copy(*c);
        },
        c.get());
    if (rc == 0) c.release();
    MPIX_TRY(check(rc, "launch(wait_then_copy_prefix)"));
    return nthen ? batch(then, nthen) : Status{};
  }
  Status synchronize() override { return check(mpix_host_stream_synchronize(s_), "synchronize"); }
  TriggerMode trigger_mode() const override { return TriggerMode::memop; }
  void *native() const override { return s_; }
  // With MPIX_HOST_IPC, the stand-in device memory is device 0's (host_ipc.hpp).
  int device() const override { return host_ipc_on() ? 0 : -1; }
  Status check_live() const override {
    if (live()) return {};
    return make_status(MPI_ERR_ARG,
                       "host stream %p was destroyed (mpix_host_stream_destroy) "
                       "while an MPIX_Stream still runs on it",
                       static_cast<void *>(s_));
  }

 private:
  // A copy in by the received length (copy_prefix_async); with word, a tiny receive's wait too.
  struct Copy {
    void *dst;
    const void *src;
    std::size_t max;
    const uint64_t *len;
    uint64_t skip;
    const uint64_t *word;  // the completion word (wait_then_copy_prefix), or null
    uint64_t value;
    uint32_t flag;  // the tiny receive's flag (TinyWords)
  };
  static void copy_by_length(const Copy &c) {
    const uint64_t len = load_signal(c.len);  // read now, in stream order
    const uint64_t from = load_signal(c.len + 1);
    // An announced send's data is in place once its ready word reaches the value
    // (len_word[4..5]; StagedBuffers): the worker waits for it, as the GPU's kernel does.
    if (from) wait_gate(c.len);
    const uint64_t n = len > c.skip ? len - c.skip : 0;
    if (n)
      std::memcpy(c.dst, from ? reinterpret_cast<const void *>(from) : c.src,
                  n < c.max ? static_cast<std::size_t>(n) : c.max);
    if (!from) return;
    // The sender's done word (len_word[6..7]), then copied, as the GPU's kernel writes them.
    auto *done = reinterpret_cast<uint64_t *>(load_signal(c.len + 6));
    if (done) store_signal(done, load_signal(c.len + 7));
    store_signal(const_cast<uint64_t *>(c.len) + 3, 1);  // copied
  }
  // The kernel's poll (poll_tiny in cuda_kernels.cu), one word after the other: once every word
  // the receive needs carries the flag, the message is copied from them; once the completion
  // word is reached without them (after one more look), by length.
  static void wait_tiny_and_copy(const Copy &c) {
    const uint64_t *tw = c.len + TinyWords::kAt;
    const std::size_t words = TinyWords::words(c.max);
    uint32_t payload[TinyWords::kBytes / 4 + 1];
    bool reached_once = false;
    Backoff backoff;
    for (;;) {
      const uint64_t epoch = notifier().epoch();
      const uint64_t head = load_signal(tw);
      bool flagged = head >> 32 == c.flag;
      for (std::size_t i = 1; flagged && i < words; ++i) {
        const uint64_t w = load_signal(tw + i);
        flagged = w >> 32 == c.flag;
        payload[i - 1] = static_cast<uint32_t>(w);
      }
      if (flagged) {
        const std::size_t n = static_cast<uint32_t>(head);
        std::memcpy(c.dst, payload, n < c.max ? n : c.max);
        return;
      }
      if (reached(load_signal(c.word), c.value)) {
        if (reached_once) return copy_by_length(c);
        reached_once = true;
        continue;
      }
      backoff.pause(epoch);
    }
  }
  // Waits until the gate word named at @p len_word[4] reaches the value at [5] (no gate: none).
  static void wait_gate(const uint64_t *len_word) {
    const auto *gate = reinterpret_cast<const uint64_t *>(load_signal(len_word + 4));
    if (!gate) return;
    const uint64_t value = load_signal(len_word + 5);
    // Written by another process (its stream's worker): no notifier tells; poll, then nap.
    for (unsigned spins = 0; !reached(load_signal(gate), value); ++spins) {
      if (spins < 64) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  static Status check(int rc, const char *what) {
    if (rc == 0) return {};
    return make_status(rc, "mpix_host_stream_%s failed (the host stream was destroyed?)", what);
  }
  // Whether s_ is live: the set lookup once, then again only after some host stream was
  // destroyed (host_stream_destroyed_epoch). The epoch is read before the lookup, so a
  // destruction after it changes the epoch and forces a new lookup.
  bool live() const {
    const uint64_t e = host_stream_destroyed_epoch();
    if (e == live_epoch_.load(std::memory_order_relaxed)) return true;
    if (!host_stream_is_live(s_)) return false;
    live_epoch_.store(e, std::memory_order_relaxed);
    return true;
  }

  mpix_host_stream_t s_;
  bool owned_;
  mutable std::atomic<uint64_t> live_epoch_{~uint64_t{0}};  // no epoch: not yet looked up
};

class HostBackend final : public Backend {
 public:
  StreamKind kind() const override { return StreamKind::host; }
  const char *name() const override { return "host"; }
  Status open_stream(void *native, TriggerMode, std::unique_ptr<ExecStream> *out) override {
    auto s = static_cast<mpix_host_stream_t>(native);
    bool owned = false;
    if (s && !host_stream_is_live(s))
      return make_status(MPI_ERR_ARG,
                         "info value %p is not a live mpix host stream (destroyed, "
                         "or not made by mpix_host_stream_create)",
                         native);
    if (!s) {
      const int rc = mpix_host_stream_create(&s);
      if (rc != 0)
        return make_status(rc == MPI_ERR_NO_MEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER,
                           "could not create a host stream (its worker thread could not be "
                           "started, or no memory; see the log line before)");
      owned = true;
    }
    out->reset(new HostExecStream(s, owned));
    return {};
  }
  MemKind classify(const void *p) const override {
    uint64_t base = 0, size = 0, id = 0;
    return host_ipc_on() && host_ipc_range(p, &base, &size, &id) ? MemKind::device : MemKind::host;
  }
  bool emulates_device_memory() const override { return host_ipc_on(); }
  Status alloc_pinned(std::size_t bytes, void **p) override {
    *p = std::malloc(bytes ? bytes : 1);
    return *p ? Status{} : make_status(MPI_ERR_NO_MEM, "out of host memory (%zu bytes)", bytes);
  }
  void free_pinned(void *p) override { std::free(p); }
  // MPIX_HOST_IPC (tests): a host stream of mpix's own (partitioned/direct_link.hpp keeps it).
  Status open_private_stream(int device, std::unique_ptr<ExecStream> *out) override {
    if (!host_ipc_on()) return Backend::open_private_stream(device, out);
    mpix_host_stream_t s = nullptr;
    const int rc = mpix_host_stream_create(&s);
    if (rc != 0) return make_status(rc, "could not create a host stream of mpix's own");
    out->reset(new HostExecStream(s, true));
    return {};
  }
  // MPIX_HOST_IPC (tests): host_ipc.hpp's shared memory in place of device memory and CUDA IPC.
  Status alloc_device(int, std::size_t bytes, void **p) override {
    if (!host_ipc_on()) return Backend::alloc_device(0, bytes, p);
    *p = host_ipc_alloc(bytes);
    return *p ? Status{}
              : make_status(MPI_ERR_NO_MEM, "host IPC: no shared memory (%zu bytes)", bytes);
  }
  Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) override {
    if (host_ipc_on() && host_ipc_range(p, base, size, buffer_id)) return {};
    return make_status(MPI_ERR_ARG, "host IPC: %p is not shared device memory", p);
  }
  Status ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) override {
    uint64_t id = 0;
    if (host_ipc_on() &&
        (host_ipc_mapped_range(p, start, size) || host_ipc_range(p, start, size, &id)))
      return {};
    return make_status(MPI_ERR_ARG, "host IPC: %p is not mapped shared memory", p);
  }
  Status ipc_handle(uint64_t base, unsigned char (&handle)[64]) override {
    if (!host_ipc_on()) return Backend::ipc_handle(base, handle);
    return host_ipc_handle(base, handle);
  }
  Status ipc_open(int, const unsigned char (&handle)[64], void **base, bool *in_use) override {
    *in_use = false;
    if (!host_ipc_on()) return Backend::ipc_open(0, handle, base, in_use);
    return host_ipc_open(handle, base);
  }
  void ipc_close(int, void *base) override { host_ipc_close(base); }
  Status ipc_device_uuid(int device, unsigned char (&uuid)[16]) override {
    if (!host_ipc_on()) return Backend::ipc_device_uuid(device, uuid);
    // One stand-in device per node: every rank of the node maps every other's memory.
    std::memset(uuid, 0, sizeof uuid);
    std::memcpy(uuid, "mpix-host-ipc", 13);
    return {};
  }
  bool ipc_can_reach(int, const unsigned char (&uuid)[16]) override {
    return host_ipc_on() && std::memcmp(uuid, "mpix-host-ipc", 13) == 0;
  }
  std::string describe() const override {
    return "host: in-order host streams on worker threads (always available)";
  }
};

}  // namespace

// Process-wide, not the Runtime's (core/runtime.hpp), and never destroyed: host streams use it
// without MPI, before MPI_Init and after MPI_Finalize.
Backend *host_backend() {
  static HostBackend *b = new HostBackend;
  return b;
}

namespace {
Status host_backend_get(Backend **out) {
  *out = host_backend();
  return {};
}
}  // namespace

// Host streams, and streams of the "general" kind (host-driven).
extern const BackendEntry k_host_backend = {
    "host", {StreamKind::host, StreamKind::general}, host_backend_get};

}  // namespace mpix
