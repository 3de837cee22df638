// The HIP side of the GPU backend shim (gpu/common/gpu_api.hpp says what a shim provides).
// Host code only: it compiles against the HIP runtime headers with a host compiler (Debian's
// libamdhip64-dev). mpix's kernels need hipcc, so the `kernel` trigger mode is not available
// in such a build; a device without stream memory operations falls back to `hostfn`.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "gpu/common/gpu_api.hpp"

namespace mpix {

Status hip_status(hipError_t rc, const char *expr, const char *file, int line);

#define MPIX_HIP_CHECK(expr)                                                                    \
  do {                                                                                          \
    hipError_t mpix_he_ = (expr);                                                               \
    if (mpix_he_ != hipSuccess) return ::mpix::hip_status(mpix_he_, #expr, __FILE__, __LINE__); \
  } while (0)

struct HipApi {
  using stream_t = hipStream_t;
  static constexpr StreamKind kKind = StreamKind::hip;
  static constexpr const char *kName = "hip";
  static constexpr const char *kSubsys = "hip";
  static constexpr const char *kStreamType = "hipStream_t";
  static constexpr bool kHasKernels = false;
  static constexpr bool kHasBatch = false;

  static Status init();
  static std::string versions();
  static Status device_count(int *n);
  static Status device_info(int dev, GpuDeviceInfo *out);
  static Status get_device(int *dev);
  static Status set_device(int dev);
  // 0 and hipStreamPerThread name a default stream of the calling thread's current device.
  static bool is_default_stream(stream_t s) { return s == nullptr || s == hipStreamPerThread; }
  static Status stream_device(stream_t s, int *dev);
  static Status check_stream_context(stream_t, stream_t) { return {}; }
  static void check_module_loading() {}
  static Status is_capturing(stream_t s, bool *capturing);

  static Status write_value(stream_t s, uint64_t dev_word, uint64_t value);
  static Status wait_value(stream_t s, uint64_t dev_word, uint64_t value);
  static Status batch(stream_t s, const GpuMemOp *ops, std::size_t n);
  static Status launch_host(stream_t s, void (*fn)(void *), void *arg);
  static Status copy_async(void *dst, const void *src, std::size_t bytes, stream_t s);
  static Status copy_2d_async(void *dst, const void *src, std::size_t width, std::size_t pitch,
                              std::size_t height, stream_t s);
  static Status synchronize(stream_t s);
  static Status stream_create_private(stream_t *s);

  // *@p device (where not null): the device of device memory, else kAnyDevice.
  static MemKind classify(const void *p, int *device = nullptr);
  static bool kernel_can_access(const void *p, int dev);
  static bool device_memory_of(const void *p, int dev);
  static Status host_alloc(std::size_t bytes, void **p);
  static void host_free(void *p);
  // Only GPU-direct sends use it, and GPU-direct is off on HIP.
  static Status device_alloc(std::size_t, void **) { return no_ipc(); }
  static Status host_register(void *p, std::size_t bytes);
  static void host_unregister(void *p);
  static Status host_device_pointer(void *host, uint64_t *dev);

  // CUDA IPC's twins are not wired up for HIP (never run here): GPU-direct stays off on HIP.
  static Status ipc_range(const void *, uint64_t *, uint64_t *, uint64_t *) { return no_ipc(); }
  static Status mapped_range(const void *, uint64_t *, uint64_t *) { return no_ipc(); }
  static Status ipc_handle(uint64_t, unsigned char (&)[64]) { return no_ipc(); }
  static Status ipc_open(const unsigned char (&)[64], void **, bool *in_use) {
    *in_use = false;
    return no_ipc();
  }
  static void ipc_close(void *) {}
  static Status device_uuid(int, unsigned char (&)[16]) { return no_ipc(); }
  static bool can_access_peer(int, int) { return false; }
  static Status no_ipc() {
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "GPU-direct (IPC) is not built for HIP");
  }

  static Status kernel_write(stream_t s, uint64_t dev_word, uint64_t value);
  static Status kernel_wait(stream_t s, uint64_t dev_word, uint64_t value);
  // The writes and waits of @p l in one kernel of one thread, in order (a write a release store
  // at system scope, a wait as kernel_wait's).
  static Status ops_kernel(stream_t s, const OpList &l);
  static Status copy_runs_kernel(stream_t s, void *dst, const void *src, const CopyRun *runs,
                                 std::size_t n);
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
  static Status waits_copy_write_kernel(stream_t s, uint64_t marks, std::size_t nmarks,
                                        uint64_t mark, const ThenWaits &first, void *dst,
                                        const void *src, std::size_t bytes, uint64_t dev_word,
                                        uint64_t value, bool local_dst);
  static Status copy_write_kernel(stream_t s, void *dst, const void *src, std::size_t bytes,
                                  uint64_t dev_word, uint64_t value);
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
  static Status wait_copy_many_kernel(stream_t s, const FusedReceives &r, int slot, uint64_t ticket,
                                      const ThenWaits &then);
  // A fused receive larger than one block runs on a grid whose blocks meet in device words of
  // their stream's own (@p slot, from fuse_slot_acquire; -1: one block), told apart per launch
  // by @p ticket (a new value each time on the slot). Slots are never given back: a process
  // that made kFuseSlots streams runs later streams' fused receives on one block.
  static constexpr int kFuseSlots = 4096;
  static int fuse_slot_acquire();
  static Status load_kernels();
};

}  // namespace mpix
