// One CUDA or HIP stream driven in stream order, in one of three trigger modes (DESIGN.md §3):
//   memop   stream memory operations write / wait on mapped host signal words; no host thread
//           on the stream's critical path.
//   hostfn  the stream runs host functions that store the word or spin until it is reached
//           (MPICH's design; a baseline). The runtime runs host functions one at a time, so a
//           waiting one holds back every other stream's host functions in the process.
//   kernel  1-thread kernels store the word or spin on it; used where memory operations are
//           not available and, in memop mode, while the stream is being captured into a graph.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>

#include "base/waiter.hpp"
#include "gpu/backend.hpp"
#include "gpu/common/gpu_api.hpp"
#include "gpu/common/signal_map.hpp"
#include "gpu/gpu_settings.hpp"

namespace mpix {

// Makes @p dev current for the scope of a runtime call on a stream of that device, and puts
// the caller's device back afterwards. Costs one get-device call when nothing changes.
template <class Api>
class DeviceGuard {
 public:
  explicit DeviceGuard(int dev) {
    if (dev < 0 || !Api::get_device(&prev_).is_ok() || prev_ == dev) return;
    st_ = Api::set_device(dev);
    changed_ = st_.is_ok();
  }
  ~DeviceGuard() {
    if (changed_) Api::set_device(prev_);
  }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  const Status &status() const { return st_; }

 private:
  int prev_ = -1;
  bool changed_ = false;
  Status st_;
};

namespace gpu_detail {

struct HostSignal {
  uint64_t *word;
  uint64_t value;
};

// Host functions of the hostfn mode. They touch host memory only: a host function must not
// call the GPU runtime.
inline void host_store(void *p) {
  std::unique_ptr<HostSignal> h(static_cast<HostSignal *>(p));
  store_signal(h->word, h->value);
  notifier().notify();
}

inline void host_wait(void *p) {
  std::unique_ptr<HostSignal> h(static_cast<HostSignal *>(p));
  Backoff backoff;
  for (;;) {
    uint64_t epoch = notifier().epoch();
    if (reached(load_signal(h->word), h->value)) return;
    backoff.pause(epoch);
  }
}

// The copy engine's way through a table of runs: one 2D copy per strided run, one copy per
// single block. A 2D copy needs len <= stride (a send's overlapping typemap may not have it)
// and a pitch the runtime takes; other runs go row by row.
template <class Api>
Status copy_runs(void *dst, const void *src, const CopyRun *runs, std::size_t n,
                 typename Api::stream_t s) {
  constexpr uint64_t kMaxPitch = (uint64_t{1} << 31) - 1;
  auto *d = static_cast<char *>(dst);
  auto *c = static_cast<const char *>(src);
  for (std::size_t i = 0; i < n; ++i) {
    const CopyRun r = runs[i];
    if (r.count == 1) {
      MPIX_TRY(Api::copy_async(d + r.offset, c + r.offset, r.len, s));
    } else if (r.len <= r.stride && r.stride <= kMaxPitch) {
      MPIX_TRY(Api::copy_2d_async(d + r.offset, c + r.offset, r.len, r.stride, r.count, s));
    } else {
      for (uint64_t k = 0; k < r.count; ++k)
        MPIX_TRY(
            Api::copy_async(d + r.offset + k * r.stride, c + r.offset + k * r.stride, r.len, s));
    }
  }
  return {};
}

}  // namespace gpu_detail

template <class Api>
class GpuExecStream final : public ExecStream {
 public:
  using stream_t = typename Api::stream_t;

  GpuExecStream(stream_t s, int device, TriggerMode mode, const SignalMap<Api> *signals)
      : s_(s),
        device_(device),
        mode_(mode),
        signals_(signals),
        default_(Api::is_default_stream(s)),
        fuse_slot_(Api::kHasKernels ? Api::fuse_slot_acquire() : -1) {}

  Status write_value(uint64_t *word, uint64_t value) override {
    StreamMemOp op{StreamMemOp::write, word, value};
    return batch(&op, 1);
  }

  Status wait_value(const uint64_t *word, uint64_t value) override {
    StreamMemOp op{StreamMemOp::wait, const_cast<uint64_t *>(word), value};
    return batch(&op, 1);
  }

  Status batch(const StreamMemOp *ops, std::size_t n) override {
    // A default-stream handle names the current device's stream: make the stream's device
    // current for every call on it.
    DeviceGuard<Api> dg(default_ ? device_ : -1);
    MPIX_TRY(dg.status());
    TriggerMode m = mode_;
    if (m == TriggerMode::memop && Api::kHasKernels) {
      bool capturing = false;
      MPIX_TRY(Api::is_capturing(s_, &capturing));
      if (capturing) m = TriggerMode::kernel;
    }
    if (m == TriggerMode::hostfn) {
      DeviceGuard<Api> g(device_);
      MPIX_TRY(g.status());
      for (std::size_t i = 0; i < n; ++i) {
        if (ops[i].device_word) {  // a host function cannot store to device memory
          MPIX_TRY(kernel_store(ops[i]));
          continue;
        }
        auto h = std::make_unique<gpu_detail::HostSignal>(
            gpu_detail::HostSignal{ops[i].word, ops[i].value});
        MPIX_TRY(Api::launch_host(
            s_, ops[i].kind == StreamMemOp::write ? gpu_detail::host_store : gpu_detail::host_wait,
            h.get()));
        h.release();  // the host function owns it now
      }
      return {};
    }
    GpuMemOp dev_ops[8] = {};
    std::unique_ptr<GpuMemOp[]> big;
    GpuMemOp *d = dev_ops;
    if (n > 8) {
      big.reset(new GpuMemOp[n]);
      d = big.get();
    }
    for (std::size_t i = 0; i < n; ++i) {
      d[i].kind = ops[i].kind == StreamMemOp::write ? GpuMemOp::write : GpuMemOp::wait;
      d[i].value = ops[i].value;
      if (ops[i].device_word) d[i].dev_word = reinterpret_cast<uint64_t>(ops[i].word);
      else MPIX_TRY(signals_->device_address(ops[i].word, &d[i].dev_word));
    }
    if (m == TriggerMode::memop) {
      // Memory operations carry the stream's own context: no device switch needed, except on a
      // default-stream handle (guarded above).
      if (n == 1)
        return d[0].kind == GpuMemOp::write ? Api::write_value(s_, d[0].dev_word, d[0].value)
                                            : Api::wait_value(s_, d[0].dev_word, d[0].value);
      // A batch (cuStreamBatchMemOp) saves driver calls, but {trigger write, completion wait}
      // as one batch released 0.5-0.6 us later than two single operations on one H200: short
      // sequences, the latency path of a blocking call, go one by one (MPIX_MEMOP_BATCH_MIN).
      static const std::size_t batch_min =
          static_cast<std::size_t>(setting_long(GpuSetting::memop_batch_min));
      if (Api::kHasBatch && n >= batch_min) return Api::batch(s_, d, n);
      for (std::size_t i = 0; i < n; ++i)
        MPIX_TRY(d[i].kind == GpuMemOp::write ? Api::write_value(s_, d[i].dev_word, d[i].value)
                                              : Api::wait_value(s_, d[i].dev_word, d[i].value));
      return {};
    }
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    if (Api::kHasKernels && n > 1 && n <= OpList::kMax) return Api::ops_kernel(s_, op_list(d, n));
    for (std::size_t i = 0; i < n; ++i)
      MPIX_TRY(d[i].kind == GpuMemOp::write ? Api::kernel_write(s_, d[i].dev_word, d[i].value)
                                            : Api::kernel_wait(s_, d[i].dev_word, d[i].value));
    return {};
  }

  // The kernel trigger mode's batch as one kernel's list (Api::ops_kernel), not a kernel per op.
  static OpList op_list(const GpuMemOp *d, std::size_t n) {
    OpList l{};
    l.n = static_cast<unsigned>(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (d[i].kind == GpuMemOp::wait) l.waits |= 1u << i;
      l.word[i] = d[i].dev_word;
      l.value[i] = d[i].value;
    }
    return l;
  }

  // A write of a device word in hostfn mode: a one-thread kernel (the device current).
  Status kernel_store(const StreamMemOp &op) {
    if (op.kind != StreamMemOp::write || !Api::kHasKernels)
      return make_status(MPI_ERR_INTERN, "a %s stream cannot %s a device word in hostfn mode",
                         Api::kName, op.kind == StreamMemOp::write ? "write" : "wait on");
    return Api::kernel_write(s_, reinterpret_cast<uint64_t>(op.word), op.value);
  }

  Status launch_host(void (*fn)(void *), void *arg) override {
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::launch_host(s_, fn, arg);
  }

  Status copy_async(void *dst, const void *src, std::size_t bytes) override {
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::copy_async(dst, src, bytes, s_);
  }

  // Few runs, or large ones: the copy engine, a runtime call per run. Many small runs: one
  // scatter/gather kernel reads the table (a runtime call costs about what a kernel launch
  // does), if this build has kernels and the kernel can reach both buffers and the table
  // (device memory of this stream's device, managed memory, mapped pinned host memory).
  Status copy_runs_async(void *dst, const void *src, const CopyRun *runs, std::size_t n) override {
    constexpr std::size_t kMaxRunCopies = 4;
    constexpr uint64_t kLargeRun = 64 * 1024;  // bytes per run where the copy engine does well
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    uint64_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i) bytes += runs[i].len * runs[i].count;
    if (Api::kHasKernels && n > kMaxRunCopies && bytes / n < kLargeRun &&
        Api::kernel_can_access(dst, device_) && Api::kernel_can_access(src, device_) &&
        Api::kernel_can_access(runs, device_))
      return Api::copy_runs_kernel(s_, dst, src, runs, n);
    return gpu_detail::copy_runs<Api>(dst, src, runs, n, s_);
  }

  // A kernel reads the length at run time; the copy engine would need it at enqueue time.
  // The length words are in the bounce buffer (mapped pinned memory) with the message.
  bool can_copy_prefix_staged(int user_device) override {
    return Api::kHasKernels && reaches_staged(user_device);
  }

  Status copy_prefix_async(void *dst, const void *src, std::size_t max_bytes,
                           const uint64_t *len_word, uint64_t skip, bool gated) override {
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::copy_prefix_kernel(s_, dst, src, max_bytes, len_word, skip, fuse_slot_,
                                   fuse_ticket_.fetch_add(1, std::memory_order_relaxed) + 1, gated);
  }

  // Up to kMaxFusedCopy bytes, where the kernel reaches both buffers (the signal words it always
  // reaches). The hostfn mode keeps its host functions: a kernel store or spin would bypass them.
  bool can_fuse_copy(const void *dst, const void *src, std::size_t bytes) override {
    return fuses_bytes(bytes) && kernel_reaches(dst, src);
  }
  // A kernel on this stream's device reaches both buffers (two pointer queries).
  bool kernel_reaches(const void *dst, const void *src) const {
    return Api::kernel_can_access(dst, device_) && Api::kernel_can_access(src, device_);
  }
  bool can_fuse_staged(std::size_t bytes, int user_device) override {
    return fuses_bytes(bytes) && reaches_staged(user_device);
  }
  bool fuses_bytes(std::size_t bytes) const {
    return Api::kHasKernels && mode_ != TriggerMode::hostfn && bytes <= kMaxFusedCopy;
  }
  // A bounce buffer is mapped pinned memory (the same address on every device: unified
  // addressing) or this stream's device's memory (StagedBuffers::bounce_device); a user buffer
  // as kernel_can_access says: its own device's memory or managed memory.
  bool reaches_staged(int user_device) const {
    return user_device == kAnyDevice || user_device == device_;
  }

  // The caller checked can_fuse_staged (a staged send's copy out: StreamStager::fuses_copy_out).
  Status fused_copy_then_write(void *dst, const void *src, std::size_t bytes, uint64_t *word,
                               uint64_t value) override {
    if (!Api::kHasKernels || mode_ == TriggerMode::hostfn)
      return ExecStream::copy_then_write(dst, src, bytes, word, value);
    uint64_t dev_word = 0;
    MPIX_TRY(signals_->device_address(word, &dev_word));
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::copy_write_kernel(s_, dst, src, bytes, dev_word, value);
  }

  // One wait_copy_many_kernel launch of @p fr, told apart by a new ticket on the stream's slot.
  Status launch_many(const FusedReceives &fr, const ThenWaits &tw) {
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::wait_copy_many_kernel(s_, fr, fuse_slot_,
                                      fuse_ticket_.fetch_add(1, std::memory_order_relaxed) + 1, tw);
  }
  // What a fused receive kernel does before it waits: false where the kernel cannot (copies
  // with a receive the kernel's grid copies, too many of them, a word it cannot reach).
  bool fold_pre(const PreWork &pre, std::size_t max_bytes, ThenWaits *tw) const {
    if (pre.write.kind != StreamMemOp::write || pre.ncopies > kMaxPreCopies) return false;
    if (pre.ncopies && !Api::fused_receive_one_block(max_bytes, fuse_slot_)) return false;
    for (std::size_t i = 0; i < pre.ncopies; ++i) {
      tw->pre_dst[i] = pre.copies[i].dst;
      tw->pre_src[i] = pre.copies[i].src;
      tw->pre_len[i] = pre.copies[i].len;
    }
    tw->npre = static_cast<unsigned>(pre.ncopies);
    tw->pre_value = pre.write.value;
    if (pre.write.device_word) {
      tw->pre_word = reinterpret_cast<uint64_t>(pre.write.word);
      return true;
    }
    return signals_->device_address(pre.write.word, &tw->pre_word).is_ok();
  }
  // copies_then_write by one kernel: up to kMaxPreCopies pieces the stream's kernels reach
  // (a stream's deferred copies out, each checked by can_fuse_staged when it was deferred).
  Status copies_then_write(const CopyPiece *pieces, std::size_t n, uint64_t *word,
                           uint64_t value) override {
    if (!Api::kHasKernels || mode_ == TriggerMode::hostfn || n == 0 || n > kMaxPreCopies)
      return ExecStream::copies_then_write(pieces, n, word, value);
    ThenWaits tw{};
    const PreWork pre{{StreamMemOp::write, word, value}, pieces, n};
    if (!fold_pre(pre, 0, &tw)) return ExecStream::copies_then_write(pieces, n, word, value);
    DeviceGuard<Api> g(device_);
    MPIX_TRY(g.status());
    return Api::copies_write_kernel(s_, tw);
  }
  // @p ops as a kernel's list of waits (device addresses), where they are at most
  // kMaxThenWaits and all waits; *@p tw's waits stay empty (n 0) where not.
  bool fold_waits(const StreamMemOp *ops, std::size_t n, ThenWaits *tw) const {
    if (n > kMaxThenWaits) return false;
    for (std::size_t i = 0; i < n; ++i) {
      if (ops[i].kind != StreamMemOp::wait) return false;
      if (ops[i].device_word) tw->word[i] = reinterpret_cast<uint64_t>(ops[i].word);
      else if (!signals_->device_address(ops[i].word, &tw->word[i]).is_ok()) return false;
      tw->value[i] = ops[i].value;
      tw->alt_word[i] = reinterpret_cast<uint64_t>(ops[i].alt_word);
      tw->alt_value[i] = ops[i].alt_value;
    }
    tw->n = static_cast<unsigned>(n);
    return true;
  }

  Status waits_copy_then_write(const MarkWait &marks, const StreamMemOp *waits, std::size_t nwaits,
                               void *dst, const void *src, std::size_t bytes, uint64_t *word,
                               uint64_t value, bool device_word,
                               CopyFacts *facts = nullptr) override {
    ThenWaits tw{};
    if (!Api::kHasKernels || mode_ == TriggerMode::hostfn || !fold_waits(waits, nwaits, &tw))
      return ExecStream::waits_copy_then_write(marks, waits, nwaits, dst, src, bytes, word, value,
                                               device_word);
    uint64_t dev_word = reinterpret_cast<uint64_t>(word);
    if (!device_word) MPIX_TRY(signals_->device_address(word, &dev_word));
    const uint64_t mark_words = reinterpret_cast<uint64_t>(marks.word);
    CopyFacts asked;
    if (!facts || !facts->known) {
      asked.known = true;
      asked.kernel_reaches = kernel_reaches(dst, src);
      asked.dst_on_device = asked.kernel_reaches && Api::device_memory_of(dst, device_);
      if (facts) *facts = asked;
    }
    const CopyFacts &f = facts ? *facts : asked;
    if (fuses_bytes(bytes) && f.kernel_reaches) {  // can_fuse_copy, from the facts
      DeviceGuard<Api> g(device_);
      MPIX_TRY(g.status());
      return Api::waits_copy_write_kernel(s_, mark_words, marks.n, marks.value, tw, dst, src, bytes,
                                          dev_word, value, f.dst_on_device);
    }
    // Larger: the kernel only waits; the copy engine copies.
    {
      DeviceGuard<Api> g(device_);
      MPIX_TRY(g.status());
      MPIX_TRY(Api::waits_copy_write_kernel(s_, mark_words, marks.n, marks.value, tw, nullptr,
                                            nullptr, 0, 0, 0, false));
    }
    return ExecStream::copy_then_write(dst, src, bytes, word, value, device_word);
  }

  Status wait_then_copy_prefix(const uint64_t *word, uint64_t value, void *dst, const void *src,
                               std::size_t max_bytes, const uint64_t *len_word, uint32_t tiny_flag,
                               const StreamMemOp *then, std::size_t nthen,
                               const PreWork *pre = nullptr) override {
    // The caller checked can_fuse_staged and can_copy_prefix_staged (Stager::fuses_copy_in).
    ThenWaits tw{};
    if (!Api::kHasKernels || mode_ == TriggerMode::hostfn)
      return ExecStream::wait_then_copy_prefix(word, value, dst, src, max_bytes, len_word,
                                               tiny_flag, then, nthen, pre);
    // What comes before the wait goes into the kernel where it can (one block: its threads
    // copy, meet, then one stores); else it is a launch of its own first.
    if (pre && !fold_pre(*pre, max_bytes, &tw)) {
      MPIX_TRY(run_pre(*pre));
      return wait_then_copy_prefix(word, value, dst, src, max_bytes, len_word, tiny_flag, then,
                                   nthen);
    }
    uint64_t dev_word = 0;
    MPIX_TRY(signals_->device_address(const_cast<uint64_t *>(word), &dev_word));
    // The other waits go into the kernel where they are few and all waits, else into a batch
    // after it.
    const bool fold = fold_waits(then, nthen, &tw);
    tw.tiny_flag = tiny_flag;  // the kernel checks the size too
    {
      DeviceGuard<Api> g(device_);
      MPIX_TRY(g.status());
      MPIX_TRY(Api::wait_copy_prefix_kernel(
          s_, dev_word, value, dst, src, max_bytes, len_word, fuse_slot_,
          fuse_ticket_.fetch_add(1, std::memory_order_relaxed) + 1, tw));
    }
    return fold || nthen == 0 ? Status{} : batch(then, nthen);
  }

  // Not under MPIX_WAITALL_FUSE=each (a kernel per receive).
  bool fuses_many(std::size_t) const override {
    static const bool one = std::strcmp(setting_str(GpuSetting::waitall_fuse), "each") != 0;
    return one && Api::kHasKernels && mode_ != TriggerMode::hostfn;
  }
  bool waits_either() const override { return Api::kHasKernels && mode_ != TriggerMode::hostfn; }
  // As few kernels as FusedReceives takes (kMax receives, kMaxBlocks blocks a launch), each
  // receive on the blocks a kernel of its own would take (wait_copy_many_kernel): the first
  // makes @p pre where it can, the last the waits of @p then where they are few (else a batch
  // after it).
  Status wait_then_copy_prefix_many(const FusedReceive *r, std::size_t n, const StreamMemOp *then,
                                    std::size_t nthen, const PreWork *pre) override {
    if (!Api::kHasKernels || mode_ == TriggerMode::hostfn || n < 2)
      return wait_then_copy_prefix_each(r, n, then, nthen, pre);
    ThenWaits tw{};
    if (pre && !fold_pre(*pre, 0, &tw)) {
      MPIX_TRY(run_pre(*pre));
      tw = ThenWaits{};
    }
    FusedReceives fr{};
    unsigned blocks = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const FusedReceive &x = r[i];
      const unsigned nb = x.dst ? Api::fused_receive_blocks(x.max_bytes, fuse_slot_) : 1u;
      if (fr.n == FusedReceives::kMax || blocks + nb > FusedReceives::kMaxBlocks) {
        MPIX_TRY(launch_many(fr, tw));
        fr = FusedReceives{};
        tw = ThenWaits{};
        blocks = 0;
      }
      const unsigned k = fr.n++;
      MPIX_TRY(signals_->device_address(const_cast<uint64_t *>(x.word), &fr.word[k]));
      fr.blocks[k] = static_cast<uint8_t>(nb);
      fr.value[k] = x.value;
      fr.dst[k] = reinterpret_cast<uint64_t>(x.dst);
      fr.src[k] = reinterpret_cast<uint64_t>(x.src);
      fr.max[k] = x.max_bytes;
      fr.len[k] = reinterpret_cast<uint64_t>(x.len_word);
      fr.tiny_flag[k] = x.tiny_flag;
      blocks += nb;
    }
    const bool fold = fold_waits(then, nthen, &tw);
    MPIX_TRY(launch_many(fr, tw));
    return !fold && nthen ? batch(then, nthen) : Status{};
  }

  Status synchronize() override {
    DeviceGuard<Api> g(default_ ? device_ : -1);
    MPIX_TRY(g.status());
    return Api::synchronize(s_);
  }
  TriggerMode trigger_mode() const override { return mode_; }
  void *native() const override { return static_cast<void *>(s_); }
  int device() const override { return device_; }

 private:
  stream_t s_;
  int device_;
  TriggerMode mode_;
  const SignalMap<Api> *signals_;
  bool default_;         // 0, the legacy or the per-thread default stream (Api::is_default_stream)
  const int fuse_slot_;  // device words of this stream's fused receives (Api::fuse_slot_acquire)
  std::atomic<uint64_t> fuse_ticket_{0};
};

}  // namespace mpix
