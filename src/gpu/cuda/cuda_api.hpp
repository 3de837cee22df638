// The CUDA side of the GPU backend shim (gpu/common/gpu_api.hpp says what a shim provides).
// The runtime comes from the static cudart, which loads libcuda.so.1 itself on first use, so
// libmpix loads and runs host-only where no driver is installed. Driver-only calls (stream
// memory operations, device attributes) are resolved at run time through
// cudaGetDriverEntryPointByVersion: libmpix never links libcuda.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "gpu/common/gpu_api.hpp"

namespace mpix {

// Turns a failed CUDA runtime call into a Status naming the expression and the place, and
// clears the error so that a non-sticky failure does not poison later calls.
Status cuda_status(cudaError_t rc, const char *expr, const char *file, int line);
Status cu_status(CUresult rc, const char *expr, const char *file, int line);

#define MPIX_CUDA_CHECK(expr)                                                                     \
  do {                                                                                            \
    cudaError_t mpix_ce_ = (expr);                                                                \
    if (mpix_ce_ != cudaSuccess) return ::mpix::cuda_status(mpix_ce_, #expr, __FILE__, __LINE__); \
  } while (0)
#define MPIX_CU_CHECK(expr)                                                                      \
  do {                                                                                           \
    CUresult mpix_cu_ = (expr);                                                                  \
    if (mpix_cu_ != CUDA_SUCCESS) return ::mpix::cu_status(mpix_cu_, #expr, __FILE__, __LINE__); \
  } while (0)

struct CudaApi {
  using stream_t = cudaStream_t;
  static constexpr StreamKind kKind = StreamKind::cuda;
  static constexpr const char *kName = "cuda";
  static constexpr const char *kSubsys = "cuda";
  static constexpr const char *kStreamType = "cudaStream_t";
  static constexpr bool kHasKernels = true;
  static constexpr bool kHasBatch = true;

  static Status init();
  static std::string versions();
  static Status device_count(int *n);
  static Status device_info(int dev, GpuDeviceInfo *out);
  static Status get_device(int *dev);
  static Status set_device(int dev);
  // The handles that name a default stream rather than a stream object: 0 and cudaStreamLegacy
  // (the legacy default stream of the calling thread's current device) and cudaStreamPerThread
  // (the calling thread's per-thread default stream). The driver resolves them against the
  // calling thread's current context, so work on them is issued with their device current.
  static bool is_default_stream(stream_t s) {
    return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
  }
  static Status stream_device(stream_t s, int *dev);
  // Whether @p s belongs to the context of @p ours, a stream mpix made with the runtime on the
  // same device: the device's primary context, which mpix's own copies and kernels use.
  static Status check_stream_context(stream_t s, stream_t ours);
  // After the runtime has started: warns once when CUDA loads modules lazily (see lazy_loading
  // in cuda_api.cpp).
  static void check_module_loading();
  static Status is_capturing(stream_t s, bool *capturing);

  static Status write_value(stream_t s, uint64_t dev_word, uint64_t value);
  static Status wait_value(stream_t s, uint64_t dev_word, uint64_t value);
  static Status batch(stream_t s, const GpuMemOp *ops, std::size_t n);
  static Status launch_host(stream_t s, void (*fn)(void *), void *arg);
  static Status copy_async(void *dst, const void *src, std::size_t bytes, stream_t s);
  // @p height rows of @p width bytes, @p pitch bytes apart in both buffers.
  static Status copy_2d_async(void *dst, const void *src, std::size_t width, std::size_t pitch,
                              std::size_t height, stream_t s);
  static Status synchronize(stream_t s);
  static Status stream_create_private(stream_t *s);

  // *@p device (where not null): the device of device memory, else kAnyDevice.
  static MemKind classify(const void *p, int *device = nullptr);
  // Whether a kernel on device @p dev can dereference @p p as it is.
  static bool kernel_can_access(const void *p, int dev);
  // Whether @p p is device memory of device @p dev (its own or mapped from another process).
  static bool device_memory_of(const void *p, int dev);
  static Status host_alloc(std::size_t bytes, void **p);
  static void host_free(void *p);
  // Device memory on the current device (mpix's own: GPU-direct send buffers, never freed).
  static Status device_alloc(std::size_t bytes, void **p);
  static Status host_register(void *p, std::size_t bytes);
  static void host_unregister(void *p);
  static Status host_device_pointer(void *host, uint64_t *dev);

  // CUDA IPC (Backend::ipc_*): the allocation's start and buffer id from the driver's pointer
  // attributes; cudaIpcGetMemHandle / OpenMemHandle / CloseMemHandle.
  static Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id);
  static Status mapped_range(const void *p, uint64_t *start, uint64_t *size);
  static Status ipc_handle(uint64_t base, unsigned char (&handle)[64]);
  static Status ipc_open(const unsigned char (&handle)[64], void **base, bool *in_use);
  static void ipc_close(void *base);
  static Status device_uuid(int dev, unsigned char (&uuid)[16]);
  static bool can_access_peer(int dev, int peer);

  // Launches @p kernel (one of mpix's, @p params its arguments) on @p s: through the
  // driver's cuLaunchKernel, ~0.4-0.5 us less host time per launch than the runtime's <<<>>>
  // on one H200 (bench/cuda/probe_call_cost.cu), where the driver takes it; else through the
  // runtime.
  static Status launch(const void *kernel, unsigned blocks, unsigned threads, stream_t s,
                       void **params);
  // 1-thread kernels of the `kernel` trigger mode (cuda_kernels.cu).
  static Status kernel_write(stream_t s, uint64_t dev_word, uint64_t value);
  static Status kernel_wait(stream_t s, uint64_t dev_word, uint64_t value);
  // The writes and waits of @p l in one kernel of one thread, in order (a write a release store
  // at system scope, a wait as kernel_wait's).
  static Status ops_kernel(stream_t s, const OpList &l);
  // Copies the blocks of @p runs (a table the kernel reads) from @p src to @p dst.
  static Status copy_runs_kernel(stream_t s, void *dst, const void *src, const CopyRun *runs,
                                 std::size_t n);
  // Runs the @p n copies of @p pieces (a table in pinned host memory the kernel reads), a
  // block per piece.
  static Status copy_list_kernel(stream_t s, const CopyPiece *pieces, std::size_t n);
  // Copies the first min(*len_word - skip, max_bytes) bytes (none if *len_word <= skip), the
  // length read when the kernel runs: once, by the grid's first block, which hands it to the
  // others through the stream's @p slot with @p ticket (as wait_copy_prefix_kernel); each block
  // reads it where @p slot is -1. @p gated: the message may come from an announced send, whose
  // copy waits for the sender's data (len_word[4..5]); a large grid then waits behind a
  // one-thread kernel, not on the GPU with all its blocks.
  static Status copy_prefix_kernel(stream_t s, void *dst, const void *src, std::size_t max_bytes,
                                   const uint64_t *len_word, uint64_t skip, int slot,
                                   uint64_t ticket, bool gated);
  // One block copies @p bytes, then stores @p value to the signal word at @p dev_word (a staged
  // send's copy out and trigger in one stream operation).
  static Status copy_write_kernel(stream_t s, void *dst, const void *src, std::size_t bytes,
                                  uint64_t dev_word, uint64_t value);
  // One block: its threads wait until each of the @p nmarks device words at @p marks reaches
  // @p mark, one thread until each of @p first's words reaches its value, then the block copies
  // @p bytes and one thread stores @p value to @p dev_word (0: none), after a GPU-scope fence
  // where @p local_dst says @p dst is this device's memory (every reader reaches it through this
  // GPU's L2), else a system-scope one.
  static Status waits_copy_write_kernel(stream_t s, uint64_t marks, std::size_t nmarks,
                                        uint64_t mark, const ThenWaits &first, void *dst,
                                        const void *src, std::size_t bytes, uint64_t dev_word,
                                        uint64_t value, bool local_dst);
  // One block copies @p then's pre copies, then stores its pre write (ExecStream::
  // copies_then_write: a stream's deferred copies out and trigger).
  static Status copies_write_kernel(stream_t s, const ThenWaits &then);
  // Whether wait_copy_prefix_kernel runs as one block for @p max_bytes on @p slot (only then
  // does it make @p then's pre copies).
  static bool fused_receive_one_block(std::size_t max_bytes, int slot);
  // The blocks wait_copy_prefix_kernel (and a receive of wait_copy_many_kernel) takes for
  // @p max_bytes on @p slot.
  static unsigned fused_receive_blocks(std::size_t max_bytes, int slot);
  // Spins until the signal word at @p dev_word reaches @p value, then copies as
  // copy_prefix_kernel with skip 0 (a staged receive's completion wait and copy in), then spins
  // until each of @p then's words reaches its value (first, @p then's pre copies and write).
  static Status wait_copy_prefix_kernel(stream_t s, uint64_t dev_word, uint64_t value, void *dst,
                                        const void *src, std::size_t max_bytes,
                                        const uint64_t *len_word, int slot, uint64_t ticket,
                                        const ThenWaits &then);
  // The receives of @p r (1 to FusedReceives::kMax, each on r.blocks[i] blocks: one, or as
  // fused_receive_blocks gives on @p slot, whose words their blocks meet in, told apart by
  // @p ticket as wait_copy_prefix_kernel's) in one kernel, each as wait_copy_prefix_kernel makes
  // it: block 0 first makes @p then's pre copies and write, and after its own copy @p then's
  // waits.
  static Status wait_copy_many_kernel(stream_t s, const FusedReceives &r, int slot, uint64_t ticket,
                                      const ThenWaits &then);
  // A fused receive larger than one block runs on a grid whose blocks meet in device words of
  // their stream's own (@p slot, from fuse_slot_acquire; -1: one block), told apart per launch
  // by @p ticket (a new value each time on the slot). Slots are never given back: a process
  // that made kFuseSlots streams runs later streams' fused receives on one block.
  static constexpr int kFuseSlots = 4096;
  static int fuse_slot_acquire();
  // Loads mpix's kernels into the current device's context now (see DESIGN.md §7: a lazily
  // loaded kernel launched behind a closed stream wait can deadlock).
  static Status load_kernels();
};

}  // namespace mpix
