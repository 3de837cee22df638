#include "gpu/hip/hip_api.hpp"

#include <cstdio>
#include <memory>

#include "base/profile.hpp"

namespace mpix {

Status hip_status(hipError_t rc, const char *expr, const char *file, int line) {
  (void)hipGetLastError();  // clears the error so a non-sticky failure does not poison later calls
  return make_status(MPI_ERR_OTHER, "%s failed at %s:%d: %s (%s)", expr, source_file(file), line,
                     hipGetErrorName(rc), hipGetErrorString(rc));
}

Status HipApi::init() {
  int n = 0;
  hipError_t rc = hipGetDeviceCount(&n);
  if (rc != hipSuccess || n == 0) {
    (void)hipGetLastError();
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "no usable HIP device: %s",
                       rc != hipSuccess ? hipGetErrorString(rc) : "the runtime reports none");
  }
  return {};
}

std::string HipApi::versions() {
  int drv = 0, rt = 0;
  (void)hipDriverGetVersion(&drv);
  (void)hipRuntimeGetVersion(&rt);
  char buf[64];
  std::snprintf(buf, sizeof buf, "driver %d, runtime %d", drv, rt);
  return buf;
}

Status HipApi::device_count(int *n) {
  MPIX_HIP_CHECK(hipGetDeviceCount(n));
  return {};
}

Status HipApi::device_info(int dev, GpuDeviceInfo *out) {
  hipDeviceProp_t prop{};
  MPIX_HIP_CHECK(hipGetDeviceProperties(&prop, dev));
  out->name = prop.name;
  int v = 0;
  MPIX_HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeCanUseStreamWaitValue, dev));
  out->memops = v != 0;
  out->host_ptr_registered = false;  // translate through hipHostGetDevicePointer
  return {};
}

Status HipApi::get_device(int *dev) {
  GpuCallTimer timed(GpuCall::other);
  MPIX_HIP_CHECK(hipGetDevice(dev));
  return {};
}

Status HipApi::set_device(int dev) {
  GpuCallTimer timed(GpuCall::other);
  MPIX_HIP_CHECK(hipSetDevice(dev));
  return {};
}

Status HipApi::stream_device(stream_t s, int *dev) {
  // HIP 5.2 cannot name a stream's device; check the handle and take the current device,
  // which is the stream's as long as it was created there (the usual pattern).
  unsigned flags = 0;
  hipError_t rc = hipStreamGetFlags(s, &flags);
  if (rc != hipSuccess) {
    (void)hipGetLastError();
    return make_status(MPI_ERR_ARG, "%p is not a valid hipStream_t (hipStreamGetFlags: %s)",
                       static_cast<void *>(s), hipGetErrorString(rc));
  }
  MPIX_HIP_CHECK(hipGetDevice(dev));
  return {};
}

Status HipApi::is_capturing(stream_t s, bool *capturing) {
  GpuCallTimer timed(GpuCall::other);
  hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;
  MPIX_HIP_CHECK(hipStreamIsCapturing(s, &cs));
  *capturing = cs != hipStreamCaptureStatusNone;
  return {};
}

Status HipApi::write_value(stream_t s, uint64_t dev_word, uint64_t value) {
  GpuCallTimer timed(GpuCall::stream_memop);
  MPIX_HIP_CHECK(hipStreamWriteValue64(s, reinterpret_cast<void *>(dev_word), value, 0));
  return {};
}

Status HipApi::wait_value(stream_t s, uint64_t dev_word, uint64_t value) {
  GpuCallTimer timed(GpuCall::stream_memop);
  // HIP's GTE compares unsigned, CUDA's GEQ cyclically; signal values grow from 0 and never
  // wrap in practice, so both agree.
  MPIX_HIP_CHECK(hipStreamWaitValue64(s, reinterpret_cast<void *>(dev_word), value,
                                      hipStreamWaitValueGte, ~0ull));
  return {};
}

Status HipApi::batch(stream_t s, const GpuMemOp *ops, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    MPIX_TRY(ops[i].kind == GpuMemOp::write ? write_value(s, ops[i].dev_word, ops[i].value)
                                            : wait_value(s, ops[i].dev_word, ops[i].value));
  return {};
}

namespace {

struct HostCall {
  void (*fn)(void *);
  void *arg;
};

// ROCm 5.2 declares hipLaunchHostFunc but its library does not export it; the stream callback
// does the same job (and, like a host function, must not call HIP).
void host_call(hipStream_t, hipError_t, void *p) {
  std::unique_ptr<HostCall> c(static_cast<HostCall *>(p));
  c->fn(c->arg);
}

}  // namespace

Status HipApi::launch_host(stream_t s, void (*fn)(void *), void *arg) {
  GpuCallTimer timed(GpuCall::host_function);
  auto c = std::make_unique<HostCall>(HostCall{fn, arg});
  MPIX_HIP_CHECK(hipStreamAddCallback(s, host_call, c.get(), 0));
  c.release();  // the callback owns it now
  return {};
}

Status HipApi::copy_async(void *dst, const void *src, std::size_t bytes, stream_t s) {
  GpuCallTimer timed(GpuCall::copy);
  MPIX_HIP_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, s));
  return {};
}

Status HipApi::copy_2d_async(void *dst, const void *src, std::size_t width, std::size_t pitch,
                             std::size_t height, stream_t s) {
  GpuCallTimer timed(GpuCall::copy);
  MPIX_HIP_CHECK(hipMemcpy2DAsync(dst, pitch, src, pitch, width, height, hipMemcpyDefault, s));
  return {};
}

Status HipApi::synchronize(stream_t s) {
  MPIX_HIP_CHECK(hipStreamSynchronize(s));
  return {};
}

Status HipApi::stream_create_private(stream_t *s) {
  MPIX_HIP_CHECK(hipStreamCreateWithFlags(s, hipStreamNonBlocking));
  return {};
}

MemKind HipApi::classify(const void *p, int *device) {
  GpuCallTimer timed(GpuCall::pointer_query);
  if (device) *device = kAnyDevice;
  hipPointerAttribute_t a{};
  if (hipPointerGetAttributes(&a, p) != hipSuccess) {
    (void)hipGetLastError();
    return MemKind::host;
  }
  if (a.isManaged) return MemKind::managed;
  if (a.memoryType != hipMemoryTypeDevice) return MemKind::pinned_host;
  if (device) *device = a.device;
  return MemKind::device;
}

// No kernels in a host-compiler build: tables of runs go through the copy engine.
bool HipApi::kernel_can_access(const void *, int) { return false; }

bool HipApi::device_memory_of(const void *, int) { return false; }

Status HipApi::host_alloc(std::size_t bytes, void **p) {
  hipError_t rc = hipHostMalloc(p, bytes ? bytes : 1, hipHostMallocPortable | hipHostMallocMapped);
  if (rc != hipSuccess) {
    (void)hipGetLastError();
    return make_status(MPI_ERR_NO_MEM, "hipHostMalloc of %zu bytes failed: %s", bytes,
                       hipGetErrorString(rc));
  }
  return {};
}

void HipApi::host_free(void *p) {
  if (p && hipHostFree(p) != hipSuccess) (void)hipGetLastError();
}

Status HipApi::host_register(void *p, std::size_t bytes) {
  MPIX_HIP_CHECK(hipHostRegister(p, bytes, hipHostRegisterPortable | hipHostRegisterMapped));
  return {};
}

void HipApi::host_unregister(void *p) {
  if (hipHostUnregister(p) != hipSuccess) (void)hipGetLastError();
}

Status HipApi::host_device_pointer(void *host, uint64_t *dev) {
  void *d = nullptr;
  MPIX_HIP_CHECK(hipHostGetDevicePointer(&d, host, 0));
  *dev = reinterpret_cast<uint64_t>(d);
  return {};
}

Status HipApi::kernel_write(stream_t, uint64_t, uint64_t) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "the kernel trigger mode needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::kernel_wait(stream_t, uint64_t, uint64_t) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "the kernel trigger mode needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::ops_kernel(stream_t, const OpList &) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "the kernel trigger mode needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::copy_runs_kernel(stream_t, void *, const void *, const CopyRun *, std::size_t) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "copying datatype blocks by kernel needs mpix's HIP kernels (build with "
                     "hipcc)");
}

Status HipApi::copy_list_kernel(stream_t, const CopyPiece *, std::size_t) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "copying a list by kernel needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::copy_prefix_kernel(stream_t, void *, const void *, std::size_t, const uint64_t *,
                                  uint64_t, int, uint64_t, bool) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "copying a run-time length needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::waits_copy_write_kernel(stream_t, uint64_t, std::size_t, uint64_t, const ThenWaits &,
                                       void *, const void *, std::size_t, uint64_t, uint64_t,
                                       bool) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "a fused wait, copy and store needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::copy_write_kernel(stream_t, void *, const void *, std::size_t, uint64_t, uint64_t) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "a fused copy and store needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::copies_write_kernel(stream_t, const ThenWaits &) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "fused copies and a store need mpix's HIP kernels (build with hipcc)");
}

bool HipApi::fused_receive_one_block(std::size_t, int) { return true; }

unsigned HipApi::fused_receive_blocks(std::size_t, int) { return 1; }

int HipApi::fuse_slot_acquire() { return -1; }

Status HipApi::wait_copy_prefix_kernel(stream_t, uint64_t, uint64_t, void *, const void *,
                                       std::size_t, const uint64_t *, int, uint64_t,
                                       const ThenWaits &) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "a fused wait and copy needs mpix's HIP kernels (build with hipcc)");
}

Status HipApi::wait_copy_many_kernel(stream_t, const FusedReceives &, int, uint64_t,
                                     const ThenWaits &) {
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "fused waits and copies need mpix's HIP kernels (build with hipcc)");
}

Status HipApi::load_kernels() { return {}; }

}  // namespace mpix
