// The stream backend for CUDA and HIP, written once over an API shim (gpu_api.hpp). Started on
// the first stream of its kind: finds the devices and what they support, maps the signal
// pool, and loads mpix's kernels into each device's context before the first stream of that
// device is used (DESIGN.md §7: lazy module loading can deadlock behind a closed stream wait).
//
// The rule for mpix's own GPU work: it never runs on, or waits behind, the legacy
// default stream, and nothing that completes an op needs a runtime call that can wait for a
// user's stream. So:
//  * every stream mpix makes is non-blocking (stream_create_private), and they are all made at
//    the first stream of a device (prepare_device), on the user's thread inside
//    MPIX_Stream_create, before any mpix wait can be pending on that device;
//  * mpix copies only with asynchronous copies on those streams (the agent's copies, the host
//    MPI_Wait copy-in), and waits for its own stream only (never the device, never stream 0);
//  * page-locked allocations, which CUDA lists as implicitly synchronising (on the device, a
//    blocking stream's later work then waits for every blocking stream's earlier work, a wait
//    of mpix's included): bounce buffers come from a 32 MiB slab made with the device
//    (alloc_pinned); only staging beyond it, and a new signal chunk (8192 words,
//    signal_map.hpp), allocate while user streams may wait. Those calls hold no host thread
//    and mpix's own streams are non-blocking, so no op's completion waits for them; what is
//    left is an ordering between two of the user's blocking streams (documented in the guide);
//  * mpix frees no device or pinned memory while ops can be in flight (cudaFree /
//    cudaFreeHost wait for the device): the pools are never shrunk.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "base/signal_pool.hpp"
#include "base/waiter.hpp"
#include "gpu/backend.hpp"
#include "gpu/common/gpu_exec_stream.hpp"
#include "gpu/common/signal_map.hpp"
#include "gpu/gpu_settings.hpp"

namespace mpix {

template <class Api>
class GpuBackend final : public Backend {
 public:
  using stream_t = typename Api::stream_t;

  // Once per process; later calls return the first outcome.
  Status start() {
    std::call_once(once_, [this] { started_ = do_start(); });
    return started_;
  }

  StreamKind kind() const override { return Api::kKind; }
  const char *name() const override { return Api::kName; }

  Status open_stream(void *native, TriggerMode mode, std::unique_ptr<ExecStream> *out) override {
    MPIX_TRY(start());
    auto s = static_cast<stream_t>(native);
    int dev = -1;
    MPIX_TRY(Api::stream_device(s, &dev));
    if (dev < 0 || dev >= static_cast<int>(devices_.size()))
      return make_status(MPI_ERR_ARG, "%s %p belongs to device %d, outside the %zu visible",
                         Api::kStreamType, native, dev, devices_.size());
    MPIX_TRY(prepare_device(dev));
    {
      DeviceGuard<Api> g(dev);
      MPIX_TRY(g.status());
      MPIX_TRY(Api::check_stream_context(s, private_[dev].s));
    }
    if (Api::is_default_stream(s))
      MPIX_LOG(info, Api::kSubsys,
               "stream %p is a default stream of device %d: mpix issues its "
               "work there with that device current, from the calling thread",
               native, dev);
    TriggerMode m = mode;
    if (m == TriggerMode::memop && !devices_[dev].memops) {
      m = Api::kHasKernels ? TriggerMode::kernel : TriggerMode::hostfn;
      MPIX_LOG(info, Api::kSubsys,
               "device %d (%s) has no 64-bit stream memory operations: "
               "trigger mode %s",
               dev, devices_[dev].name.c_str(), trigger_mode_name(m));
    }
    if (m == TriggerMode::kernel && !Api::kHasKernels)
      return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                         "trigger mode kernel needs mpix's %s kernels, which this build does not "
                         "have (its device code was not compiled)",
                         Api::kName);
    MPIX_LOG(debug, Api::kSubsys, "stream %p on device %d, trigger mode %s", native, dev,
             trigger_mode_name(m));
    out->reset(new GpuExecStream<Api>(s, dev, m, &signals_));
    return {};
  }

  MemKind classify(const void *p) const override { return Api::classify(p); }
  MemKind classify_at(const void *p, int *device) const override {
    return Api::classify(p, device);
  }

  // Bounce buffers and tables come first from a slab allocated at the first stream of a device
  // (prepare_device), so that staging small and medium messages needs no page-locked
  // allocation while user streams may be waiting (CUDA lists those as implicitly
  // synchronising: on the device they order a blocking stream's later work after every
  // blocking stream's earlier work, a wait of mpix's included). Beyond the slab, or before any
  // device was prepared, each buffer is allocated on its own.
  Status alloc_pinned(std::size_t bytes, void **p) override {
    MPIX_TRY(start());
    {
      std::lock_guard<std::mutex> lk(slab_mu_);
      const std::size_t need = (bytes + kSlabAlign - 1) / kSlabAlign * kSlabAlign;
      if (slab_ && need <= kSlabBytes - slab_used_) {
        *p = slab_ + slab_used_;
        slab_used_ += need;
        return {};
      }
    }
    return Api::host_alloc(bytes, p);
  }
  void free_pinned(void *p) override {
    {
      std::lock_guard<std::mutex> lk(slab_mu_);
      auto *c = static_cast<char *>(p);
      if (slab_ && c >= slab_ && c < slab_ + kSlabBytes) return;  // slab space is not reused
    }
    Api::host_free(p);
  }

  Status copy_sync(void *dst, const void *src, std::size_t bytes) override {
    stream_t s{};
    MPIX_TRY(private_stream(&s));
    MPIX_TRY(Api::copy_async(dst, src, bytes, s));
    return Api::synchronize(s);
  }

  Status copy_runs_sync(void *dst, const void *src, const CopyRun *runs, std::size_t n) override {
    stream_t s{};
    MPIX_TRY(private_stream(&s));
    MPIX_TRY(gpu_detail::copy_runs<Api>(dst, src, runs, n, s));
    return Api::synchronize(s);
  }

  Status agent_copy(int device, void *dst, const void *src, std::size_t bytes,
                    uint64_t *ticket) override {
    Side *sd = nullptr;
    MPIX_TRY(side_of(device, &sd));
    // Deferred copies first, with their completion: this copy's own completion (or the wait
    // below) must not come before the list's kernel is even launched.
    if (sd->deferred) MPIX_TRY(agent_copy_flush(device));
    DeviceGuard<Api> g(device);
    MPIX_TRY(g.status());
    const auto s = static_cast<stream_t>(sd->ex->native());
    MPIX_TRY(Api::copy_async(dst, src, bytes, s));
    static const long sync_max = setting_long(GpuSetting::agent_copy_sync_max);
    if (sync_max > 0 && bytes <= static_cast<std::size_t>(sync_max)) {
      // A small copy is waited for here: a few microseconds of the agent thread, against a
      // second runtime call (the completion write) and the poll when done asynchronously.
      MPIX_TRY(Api::synchronize(s));
      *ticket = sd->issued;  // reached: the stream ran everything issued before too
      return {};
    }
    MPIX_TRY(sd->ex->write_value(sd->word.word, sd->issued + 1));
    *ticket = ++sd->issued;
    return {};
  }

  // Deferred copies between device memory of at most kListCopyMax bytes wait in a list that
  // agent_copy_flush hands to one kernel, in pieces of at most kListPiece bytes (a block
  // each): each cudaMemcpyAsync costs the agent ~4-5 us (one H200 under MPS,
  // bench/cuda/probe_copies.cu), a launch copying 64 pieces about as much in all. Larger
  // ones, and copies with host memory (which may be pageable), go to the copy engine at once.
  Status agent_copy_deferred(int device, void *dst, const void *src, std::size_t bytes,
                             bool on_device, uint64_t *ticket) override {
    Side *sd = nullptr;
    MPIX_TRY(side_of(device, &sd));
    if (Api::kHasKernels && sd->tables && on_device && bytes <= kListCopyMax) {
      const auto d = reinterpret_cast<uint64_t>(dst), s = reinterpret_cast<uint64_t>(src);
      for (std::size_t at = 0; at < bytes; at += kListPiece)
        sd->list.push_back(CopyPiece{d + at, s + at, std::min(kListPiece, bytes - at), 0});
    } else {
      DeviceGuard<Api> g(device);
      MPIX_TRY(g.status());
      MPIX_TRY(Api::copy_async(dst, src, bytes, static_cast<stream_t>(sd->ex->native())));
    }
    sd->deferred = true;
    *ticket = sd->issued + 1;  // the value the next completion write stores
    return {};
  }

  Status agent_copy_flush(int device) override {
    if (device < 0) MPIX_TRY(Api::get_device(&device));
    if (device >= static_cast<int>(side_.size()) || !side_[device].deferred) return {};
    DeviceGuard<Api> g(device);
    MPIX_TRY(g.status());
    Side &sd = side_[device];
    const auto s = static_cast<stream_t>(sd.ex->native());
    Status st = flush_list(sd, s);
    if (!st.is_ok()) {
      // The copies still have to run before the completion: one by one on the copy engine.
      MPIX_LOG(warn, Api::kSubsys, "copy kernel for the agent's copies: %s; copying one by one",
               st.what().c_str());
      for (const CopyPiece &c : sd.list)
        MPIX_TRY(Api::copy_async(reinterpret_cast<void *>(c.dst),
                                 reinterpret_cast<const void *>(c.src), c.len, s));
    }
    sd.list.clear();
    MPIX_TRY(sd.ex->write_value(sd.word.word, sd.issued + 1));
    ++sd.issued;
    sd.deferred = false;
    return {};
  }

  bool agent_copy_done(int device, uint64_t ticket) override {
    if (device < 0 && !Api::get_device(&device).is_ok()) return false;
    const Side &sd = side_[device];
    return !sd.ex || reached(load_signal(sd.word.word), ticket);
  }

  Status alloc_device(int device, std::size_t bytes, void **p) override {
    MPIX_TRY(start());
    DeviceGuard<Api> g(device);
    MPIX_TRY(g.status());
    return Api::device_alloc(bytes, p);
  }

  Status open_private_stream(int device, std::unique_ptr<ExecStream> *out) override {
    MPIX_TRY(start());
    if (device < 0 || device >= static_cast<int>(devices_.size()))
      return make_status(MPI_ERR_ARG, "device %d is outside the %zu visible", device,
                         devices_.size());
    MPIX_TRY(prepare_device(device));
    DeviceGuard<Api> g(device);
    MPIX_TRY(g.status());
    stream_t s{};
    MPIX_TRY(Api::stream_create_private(&s));
    const TriggerMode m = devices_[device].memops
                              ? TriggerMode::memop
                              : (Api::kHasKernels ? TriggerMode::kernel : TriggerMode::hostfn);
    out->reset(new GpuExecStream<Api>(s, device, m, &signals_));
    return {};
  }

  Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) override {
    MPIX_TRY(start());
    return Api::ipc_range(p, base, size, buffer_id);
  }
  Status ipc_mapped_range(const void *p, uint64_t *start_at, uint64_t *size) override {
    MPIX_TRY(start());
    return Api::mapped_range(p, start_at, size);
  }
  Status ipc_handle(uint64_t base, unsigned char (&handle)[64]) override {
    MPIX_TRY(start());
    return Api::ipc_handle(base, handle);
  }
  Status ipc_open(int device, const unsigned char (&handle)[64], void **base,
                  bool *in_use) override {
    *in_use = false;
    MPIX_TRY(start());
    DeviceGuard<Api> g(device);
    MPIX_TRY(g.status());
    return Api::ipc_open(handle, base, in_use);
  }
  void ipc_close(int device, void *base) override {
    DeviceGuard<Api> g(device);
    if (g.status().is_ok()) Api::ipc_close(base);
  }
  Status ipc_device_uuid(int device, unsigned char (&uuid)[16]) override {
    MPIX_TRY(start());
    return Api::device_uuid(device, uuid);
  }
  bool ipc_can_reach(int device, const unsigned char (&uuid)[16]) override {
    if (!start().is_ok()) return false;
    const int n = static_cast<int>(devices_.size());
    for (int d = 0; d < n; ++d) {
      unsigned char u[16] = {};
      if (!Api::device_uuid(d, u).is_ok() || std::memcmp(u, uuid, 16) != 0) continue;
      return d == device || Api::can_access_peer(device, d);
    }
    return false;  // not visible here
  }

  std::string describe() const override {
    std::string d = std::string(Api::kName) + ": " + Api::versions() + "; ";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu device(s)", devices_.size());
    d += buf;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%zu ", i ? ", " : ": ", i);
      d += buf + devices_[i].name + (devices_[i].memops ? " (memops)" : " (no memops)");
    }
    return d;
  }

 private:
  struct PerDevice {
    bool ready = false;
  };
  struct PrivateStream {
    bool made = false;
    stream_t s{};
  };
  // The agent's deferred copies into device memory that its copy kernel takes
  // (agent_copy_deferred): at most kListCopyMax bytes each, cut into pieces of kListPiece
  // bytes, in kListSlots tables of kListLen pieces.
  static constexpr std::size_t kListCopyMax = std::size_t{1} << 20;
  static constexpr std::size_t kListPiece = 64 * 1024;
  static constexpr unsigned kListSlots = 16;
  static constexpr std::size_t kListLen = 256;

  // The agent's copies of a device (agent_copy): a private stream and the word its copies'
  // completions are counted on. Used by the agent thread only; never destroyed (copies may be
  // in flight at exit).
  struct Side {
    std::unique_ptr<GpuExecStream<Api>> ex;
    SignalWord word;
    uint64_t issued = 0;
    bool deferred = false;  // copies issued since the last completion write (agent_copy_flush)
    std::vector<CopyPiece> list;  // deferred copies for the next flush's kernel
    // kListSlots tables of kListLen pieces in pinned host memory, which the copy kernel reads;
    // slot i may be written again once the completion word reached table_ticket[i].
    CopyPiece *tables = nullptr;
    uint64_t table_ticket[kListSlots] = {};
    unsigned next_table = 0;
  };

  // Launches the copy kernels of sd.list (kListLen pieces per table), the device current.
  // On failure, pieces from the first failed launch on have not been issued: sd.list keeps
  // only those.
  Status flush_list(Side &sd, stream_t s) {
    std::size_t at = 0;
    while (at < sd.list.size()) {
      const std::size_t n = std::min(kListLen, sd.list.size() - at);
      const unsigned slot = sd.next_table;
      // Reused only once the kernel that last read it has run (the flushes between make that
      // long ago, except under a burst of more than kListSlots flushes in flight).
      if (!reached(load_signal(sd.word.word), sd.table_ticket[slot])) {
        Status st = Api::synchronize(s);
        if (!st.is_ok()) {
          sd.list.erase(sd.list.begin(), sd.list.begin() + static_cast<std::ptrdiff_t>(at));
          return st;
        }
      }
      CopyPiece *t = sd.tables + static_cast<std::size_t>(slot) * kListLen;
      std::memcpy(t, sd.list.data() + at, n * sizeof(CopyPiece));
      Status st = Api::copy_list_kernel(s, t, n);
      if (!st.is_ok()) {
        sd.list.erase(sd.list.begin(), sd.list.begin() + static_cast<std::ptrdiff_t>(at));
        return st;
      }
      sd.table_ticket[slot] = sd.issued + 1;  // the completion write after this flush
      sd.next_table = (slot + 1) % kListSlots;
      at += n;
    }
    return {};
  }

  // The side stream an agent_copy on @p device (-1: the current one, which it is set to) uses.
  Status side_of(int &device, Side **sd) {
    MPIX_TRY(start());
    if (device < 0) MPIX_TRY(Api::get_device(&device));
    if (device >= static_cast<int>(side_.size()))
      return make_status(MPI_ERR_OTHER, "%s device %d is out of range", Api::kName, device);
    MPIX_TRY(prepare_device(device));
    *sd = &side_[device];  // made by prepare_device
    return {};
  }

  // The current device's stream for blocking copies (made by prepare_device).
  Status private_stream(stream_t *out) {
    MPIX_TRY(start());
    int dev = 0;
    MPIX_TRY(Api::get_device(&dev));
    if (dev < 0 || dev >= static_cast<int>(private_.size()))
      return make_status(MPI_ERR_OTHER, "current %s device %d is out of range", Api::kName, dev);
    MPIX_TRY(prepare_device(dev));
    *out = private_[dev].s;
    return {};
  }

  Status do_start() {
    MPIX_TRY(Api::init());
    Api::check_module_loading();
    int n = 0;
    MPIX_TRY(Api::device_count(&n));
    devices_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) MPIX_TRY(Api::device_info(i, &devices_[i]));
    per_device_.resize(devices_.size());
    private_.resize(devices_.size());
    side_.resize(devices_.size());
    return {};
  }

  // First stream of device @p dev: map the signal pool (once, from that device), load our
  // kernels into the device's context and make mpix's own streams of the device, so that
  // nothing of this is done later, while user streams may be waiting (see the top).
  Status prepare_device(int dev) {
    std::lock_guard<std::mutex> lk(mu_);
    if (per_device_[dev].ready) return {};
    DeviceGuard<Api> g(dev);
    MPIX_TRY(g.status());
    if (!signals_attached_) {
      signals_.attach();
      signals_attached_ = true;
    }
    if (Api::kHasKernels) MPIX_TRY(Api::load_kernels());
    if (!private_[dev].made) {
      MPIX_TRY(Api::stream_create_private(&private_[dev].s));
      private_[dev].made = true;
    }
    {
      std::lock_guard<std::mutex> slk(slab_mu_);
      void *slab = nullptr;
      if (!slab_ && Api::host_alloc(kSlabBytes, &slab).is_ok()) slab_ = static_cast<char *>(slab);
    }
    Side &sd = side_[dev];
    if (!sd.ex) {
      stream_t s{};
      MPIX_TRY(Api::stream_create_private(&s));
      // Completion is a signal word the agent polls: a stream memory write where the device
      // has them (no runtime call in the agent's poll loop).
      const TriggerMode m = devices_[dev].memops ? TriggerMode::memop
                            : Api::kHasKernels   ? TriggerMode::kernel
                                                 : TriggerMode::hostfn;
      sd.ex.reset(new GpuExecStream<Api>(s, dev, m, &signals_));
      sd.word = signal_pool().acquire();
      sd.issued = load_signal(sd.word.word);
      for (uint64_t &t : sd.table_ticket) t = sd.issued;
      // Allocated here, with the slab, not while user streams may wait (see alloc_pinned);
      // kept for the process's life. Without it, deferred copies use the copy engine.
      void *tables = nullptr;
      if (Api::kHasKernels &&
          Api::host_alloc(kListSlots * kListLen * sizeof(CopyPiece), &tables).is_ok())
        sd.tables = static_cast<CopyPiece *>(tables);
    }
    per_device_[dev].ready = true;
    return {};
  }

  std::once_flag once_;
  Status started_;
  std::vector<GpuDeviceInfo> devices_;  // fixed once started
  std::mutex mu_;
  std::vector<PerDevice> per_device_;
  std::vector<PrivateStream> private_;
  std::vector<Side> side_;  // sized once started
  bool signals_attached_ = false;
  SignalMap<Api> signals_;
  // The pinned slab (alloc_pinned): never freed (streams may copy from it at exit).
  static constexpr std::size_t kSlabBytes = std::size_t{32} << 20;
  static constexpr std::size_t kSlabAlign = 4096;
  std::mutex slab_mu_;
  char *slab_ = nullptr;
  std::size_t slab_used_ = 0;
};

}  // namespace mpix
