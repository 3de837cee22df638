#include "gpu/cuda/cuda_api.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "base/profile.hpp"
#include "gpu/gpu_settings.hpp"

namespace mpix {
namespace {

// Driver entry points, resolved once in CudaApi::init(). The _v2 memory operations are what
// cuStreamWriteValue64 & co. name since CUDA 11.7; asking for version 12000 gets them.
struct DriverFns {
  CUresult (*write64)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*wait64)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*batch)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned) = nullptr;
  CUresult (*device_get)(CUdevice *, int) = nullptr;
  CUresult (*device_attr)(int *, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*error_string)(CUresult, const char **) = nullptr;
  // Optional: used to check what the user handed us and how modules load.
  CUresult (*stream_ctx)(CUstream, CUcontext *) = nullptr;
  CUresult (*loading_mode)(CUmoduleLoadingMode *) = nullptr;
  CUresult (*pointer_attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **) = nullptr;
  // Optional (CUDA 12.0+): launches with attributes, here programmatic stream serialization.
  CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **) = nullptr;
};
DriverFns g_drv;

// CUDA lazy module loading (the default since CUDA 12.2) loads a kernel at its first launch,
// and the CUDA programming guide warns that loading "might require context synchronization":
// the launch then waits for all work of the context, including a stream that mpix holds in a
// wait for a message (a stream memory wait, or mpix's spin kernel) — which a peer may only send
// after this very launch returns, or which the agent can only release with CUDA calls of its
// own that queue behind the loading. Eager loading does all loading when the context is made,
// before any stream can wait. So, when this library is loaded — before main(), hence normally
// before anything in the process has initialised CUDA — mpix asks for EAGER unless the user
// chose a mode. A user's explicit CUDA_MODULE_LOADING is kept; CudaApi::check_module_loading
// warns if loading is lazy after all.
bool g_eager_set_by_mpix = false;

__attribute__((constructor)) void mpix_cuda_request_eager_loading() {
  const char *v = std::getenv("CUDA_MODULE_LOADING");
  if (v && *v) return;
  g_eager_set_by_mpix = setenv("CUDA_MODULE_LOADING", "EAGER", 0) == 0;
}

template <class Fn>
Status resolve(const char *symbol, Fn *fn) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &q);
  if (rc != cudaSuccess || q != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "the CUDA driver has no %s (entry point query: %s, result %d)", symbol,
                       cudaGetErrorString(rc), static_cast<int>(q));
  }
  *fn = reinterpret_cast<Fn>(p);
  return {};
}

}  // namespace

Status cuda_status(cudaError_t rc, const char *expr, const char *file, int line) {
  cudaGetLastError();  // clears a non-sticky error; a sticky one stays and shows up again
  return make_status(MPI_ERR_OTHER, "%s failed at %s:%d: %s (%s)", expr, source_file(file), line,
                     cudaGetErrorName(rc), cudaGetErrorString(rc));
}

Status cu_status(CUresult rc, const char *expr, const char *file, int line) {
  const char *s = nullptr;
  if (g_drv.error_string) g_drv.error_string(rc, &s);
  return make_status(MPI_ERR_OTHER, "%s failed at %s:%d: CUresult %d (%s)", expr, source_file(file),
                     line, static_cast<int>(rc), s ? s : "unknown");
}

Status CudaApi::init() {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    cudaGetLastError();
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "no usable CUDA device: %s",
                       rc != cudaSuccess ? cudaGetErrorString(rc) : "the driver reports none");
  }
  MPIX_TRY(resolve("cuStreamWriteValue64", &g_drv.write64));
  MPIX_TRY(resolve("cuStreamWaitValue64", &g_drv.wait64));
  MPIX_TRY(resolve("cuStreamBatchMemOp", &g_drv.batch));
  MPIX_TRY(resolve("cuDeviceGet", &g_drv.device_get));
  MPIX_TRY(resolve("cuDeviceGetAttribute", &g_drv.device_attr));
  MPIX_TRY(resolve("cuGetErrorString", &g_drv.error_string));
  if (!resolve("cuStreamGetCtx", &g_drv.stream_ctx).is_ok()) g_drv.stream_ctx = nullptr;
  if (!resolve("cuModuleGetLoadingMode", &g_drv.loading_mode).is_ok()) g_drv.loading_mode = nullptr;
  // Optional: only GPU-direct (CUDA IPC) needs it, and says so if it is missing.
  if (!resolve("cuPointerGetAttributes", &g_drv.pointer_attrs).is_ok())
    g_drv.pointer_attrs = nullptr;
  if (!resolve("cuLaunchKernel", &g_drv.launch).is_ok()) g_drv.launch = nullptr;
  if (!resolve("cuLaunchKernelEx", &g_drv.launch_ex).is_ok()) g_drv.launch_ex = nullptr;
  return {};
}

namespace {

// Whether mpix's kernels on device @p dev go with programmatic stream serialization
// (MPIX_CUDA_PDL): compute capability 9.0 and later, where the driver has cuLaunchKernelEx.
bool pdl_for(int dev) {
  static const bool wanted = std::strcmp(setting_str(GpuSetting::cuda_pdl), "on") == 0;
  if (!wanted || !g_drv.launch_ex) return false;
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return major >= 9;
}

// Launches @p fn through the driver; with @p pdl, as a programmatic dependent of the kernel
// before it on @p s (every mpix kernel waits for that one's end and memory first: griddep_wait
// in cuda_kernels.cu), which lets the GPU start it as soon as that kernel's blocks have ended
// instead of after its grid has completed.
CUresult drv_launch(CUfunction fn, unsigned blocks, unsigned threads, CUstream s, void **params,
                    bool pdl) {
  if (!pdl) return g_drv.launch(fn, blocks, 1, 1, threads, 1, 1, 0, s, params, nullptr);
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = blocks;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return g_drv.launch_ex(&cfg, fn, params, nullptr);
}

}  // namespace

Status CudaApi::launch(const void *kernel, unsigned blocks, unsigned threads, stream_t s,
                       void **params) {
  GpuCallTimer timed(GpuCall::kernel_launch);
  if (g_drv.launch) {
    // The kernel's function handle on the current device, looked up once per thread.
    struct Known {
      const void *kernel;
      int device;
      CUfunction fn;
      bool pdl;
    };
    thread_local std::vector<Known> known;
    int dev = -1;
    CUfunction fn = nullptr;
    bool pdl = false;
    if (cudaGetDevice(&dev) == cudaSuccess) {
      for (const Known &k : known)
        if (k.kernel == kernel && k.device == dev) fn = k.fn, pdl = k.pdl;
      if (!fn) {
        pdl = pdl_for(dev);
        if (cudaGetFuncBySymbol(&fn, kernel) == cudaSuccess)
          known.push_back({kernel, dev, fn, pdl});
        else cudaGetLastError();  // (its own error only: nothing else ran since the call)
      }
    }
    // Where the driver refuses (the thread's current context is not the stream's, say),
    // nothing was launched: the runtime launches it.
    if (fn && drv_launch(fn, blocks, threads, s, params, pdl) == CUDA_SUCCESS) return {};
  }
  MPIX_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), params, 0, s));
  return {};
}

void CudaApi::check_module_loading() {
  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  if (!g_drv.loading_mode || g_drv.loading_mode(&mode) != CUDA_SUCCESS) return;
  if (mode != CU_MODULE_LAZY_LOADING) {
    MPIX_LOG(debug, "cuda", "CUDA module loading is eager%s",
             g_eager_set_by_mpix ? " (CUDA_MODULE_LOADING=EAGER set by mpix at load)" : "");
    return;
  }
  const char *v = std::getenv("CUDA_MODULE_LOADING");
  const bool user_chose = v && *v && !g_eager_set_by_mpix;
  MPIX_LOG(warn, "cuda",
           "CUDA loads kernels lazily (%s): the first launch of a kernel behind an enqueued "
           "receive or wait can hang until the message arrives, or for ever. Fix: set "
           "CUDA_MODULE_LOADING=EAGER in the environment of every rank (mpirun -x "
           "CUDA_MODULE_LOADING=EAGER), or launch each kernel once before enqueuing waits",
           user_chose ? "CUDA_MODULE_LOADING is set to LAZY"
                      : "CUDA was initialised before mpix could ask for EAGER loading");
}

std::string CudaApi::versions() {
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  char buf[96];
  std::snprintf(buf, sizeof buf, "driver %d.%d, runtime %d.%d", drv / 1000, drv % 1000 / 10,
                rt / 1000, rt % 1000 / 10);
  return buf;
}

Status CudaApi::device_count(int *n) {
  MPIX_CUDA_CHECK(cudaGetDeviceCount(n));
  return {};
}

Status CudaApi::device_info(int dev, GpuDeviceInfo *out) {
  cudaDeviceProp prop{};
  MPIX_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  out->name = prop.name;
  CUdevice cud = 0;
  MPIX_CU_CHECK(g_drv.device_get(&cud, dev));
  int v = 0;
  MPIX_CU_CHECK(g_drv.device_attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, cud));
  out->memops = v != 0;
  v = 0;
  MPIX_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrCanUseHostPointerForRegisteredMem, dev));
  out->host_ptr_registered = v != 0;
  return {};
}

Status CudaApi::get_device(int *dev) {
  GpuCallTimer timed(GpuCall::other);
  MPIX_CUDA_CHECK(cudaGetDevice(dev));
  return {};
}

Status CudaApi::set_device(int dev) {
  GpuCallTimer timed(GpuCall::other);
  MPIX_CUDA_CHECK(cudaSetDevice(dev));
  return {};
}

Status CudaApi::stream_device(stream_t s, int *dev) {
  // A default-stream handle means the current device's default stream.
  if (is_default_stream(s)) return get_device(dev);
  // A handle that is no stream at all (or was destroyed) is caught here when the driver can
  // tell (cudaErrorInvalidResourceHandle, cudaErrorContextIsDestroyed); a pointer to arbitrary
  // memory is undefined behaviour in the driver and cannot be checked safely.
  cudaError_t rc = cudaStreamGetDevice(s, dev);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return make_status(MPI_ERR_ARG,
                       "info \"value\": %p is not a valid cudaStream_t (destroyed, "
                       "or not a stream; cudaStreamGetDevice: %s)",
                       static_cast<void *>(s), cudaGetErrorString(rc));
  }
  return {};
}

Status CudaApi::check_stream_context(stream_t s, stream_t ours) {
  if (is_default_stream(s) || !g_drv.stream_ctx) return {};
  CUcontext want = nullptr, have = nullptr;
  if (g_drv.stream_ctx(reinterpret_cast<CUstream>(ours), &want) != CUDA_SUCCESS) return {};
  CUresult rc = g_drv.stream_ctx(reinterpret_cast<CUstream>(s), &have);
  if (rc != CUDA_SUCCESS) {
    const char *why = nullptr;
    if (g_drv.error_string) g_drv.error_string(rc, &why);
    return make_status(MPI_ERR_ARG,
                       "info \"value\": %p is not a valid cudaStream_t "
                       "(cuStreamGetCtx: CUresult %d, %s)",
                       static_cast<void *>(s), static_cast<int>(rc), why ? why : "unknown");
  }
  if (have != want)
    return make_status(MPI_ERR_ARG,
                       "info \"value\": cudaStream_t %p belongs to a CUDA context other than its "
                       "device's primary "
                       "context (one made with cuCtxCreate, or a green context): mpix works with "
                       "streams of primary contexts only",
                       static_cast<void *>(s));
  return {};
}

Status CudaApi::is_capturing(stream_t s, bool *capturing) {
  GpuCallTimer timed(GpuCall::other);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  MPIX_CUDA_CHECK(cudaStreamIsCapturing(s, &cs));
  *capturing = cs != cudaStreamCaptureStatusNone;
  return {};
}

Status CudaApi::write_value(stream_t s, uint64_t dev_word, uint64_t value) {
  GpuCallTimer timed(GpuCall::stream_memop);
  // The default flags order the write after all earlier work's memory writes.
  MPIX_CU_CHECK(
      g_drv.write64(reinterpret_cast<CUstream>(s), dev_word, value, CU_STREAM_WRITE_VALUE_DEFAULT));
  return {};
}

Status CudaApi::wait_value(stream_t s, uint64_t dev_word, uint64_t value) {
  GpuCallTimer timed(GpuCall::stream_memop);
  MPIX_CU_CHECK(
      g_drv.wait64(reinterpret_cast<CUstream>(s), dev_word, value, CU_STREAM_WAIT_VALUE_GEQ));
  return {};
}

Status CudaApi::batch(stream_t s, const GpuMemOp *ops, std::size_t n) {
  GpuCallTimer timed(GpuCall::stream_memop);
  // The driver takes fewer than 256 operations per call ("must be less than 256": a batch of
  // 256 fails with CUDA_ERROR_INVALID_VALUE, as a deferred MPIX_Waitall_enqueue of 1,000 sends
  // and 1,000 receives did: bench/mpix_scale -d cuda, session 36). A Waitall's waits go in
  // several calls, in order.
  constexpr std::size_t kMax = 255;
  CUstreamBatchMemOpParams p[16];
  std::vector<CUstreamBatchMemOpParams> big;
  for (std::size_t off = 0; off < n; off += kMax) {
    std::size_t m = n - off < kMax ? n - off : kMax;
    CUstreamBatchMemOpParams *params = p;
    if (m > 16) {
      big.assign(m, CUstreamBatchMemOpParams{});
      params = big.data();
    }
    for (std::size_t i = 0; i < m; ++i) {
      const GpuMemOp &o = ops[off + i];
      params[i] = CUstreamBatchMemOpParams{};
      if (o.kind == GpuMemOp::write) {
        params[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        params[i].writeValue.address = o.dev_word;
        params[i].writeValue.value64 = o.value;
        params[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
      } else {
        params[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
        params[i].waitValue.address = o.dev_word;
        params[i].waitValue.value64 = o.value;
        params[i].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
      }
    }
    MPIX_CU_CHECK(g_drv.batch(reinterpret_cast<CUstream>(s), static_cast<unsigned>(m), params, 0));
  }
  return {};
}

Status CudaApi::launch_host(stream_t s, void (*fn)(void *), void *arg) {
  GpuCallTimer timed(GpuCall::host_function);
  MPIX_CUDA_CHECK(cudaLaunchHostFunc(s, fn, arg));
  return {};
}

Status CudaApi::copy_async(void *dst, const void *src, std::size_t bytes, stream_t s) {
  GpuCallTimer timed(GpuCall::copy);
  MPIX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  return {};
}

Status CudaApi::copy_2d_async(void *dst, const void *src, std::size_t width, std::size_t pitch,
                              std::size_t height, stream_t s) {
  GpuCallTimer timed(GpuCall::copy);
  MPIX_CUDA_CHECK(cudaMemcpy2DAsync(dst, pitch, src, pitch, width, height, cudaMemcpyDefault, s));
  return {};
}

Status CudaApi::synchronize(stream_t s) {
  MPIX_CUDA_CHECK(cudaStreamSynchronize(s));
  return {};
}

Status CudaApi::stream_create_private(stream_t *s) {
  // Non-blocking: it must never wait for (or be waited on by) the legacy default stream.
  MPIX_CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  return {};
}

MemKind CudaApi::classify(const void *p, int *device) {
  GpuCallTimer timed(GpuCall::pointer_query);
  if (device) *device = kAnyDevice;
  // The driver's query of the three attributes this needs: 39-58 ns a call under MPS, where the
  // runtime's cudaPointerGetAttributes (which asks for more) took 72-92 (one H100, session 30,
  // call 3). It does not fail on memory CUDA does not know: it leaves the values 0.
  if (g_drv.pointer_attrs) {
    unsigned int type = 0, managed = 0;
    int ordinal = kAnyDevice;
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[3] = {&type, &managed, &ordinal};
    if (g_drv.pointer_attrs(3, attrs, data, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS) {
      if (managed) return MemKind::managed;
      if (type == CU_MEMORYTYPE_DEVICE) {
        if (device) *device = ordinal;
        return MemKind::device;
      }
      return type == CU_MEMORYTYPE_HOST ? MemKind::pinned_host : MemKind::host;
    }
  }
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return MemKind::host;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
      if (device) *device = a.device;
      return MemKind::device;
    case cudaMemoryTypeManaged:
      return MemKind::managed;
    case cudaMemoryTypeHost:
      return MemKind::pinned_host;
    default:
      return MemKind::host;
  }
}

bool CudaApi::kernel_can_access(const void *p, int dev) {
  GpuCallTimer timed(GpuCall::pointer_query);
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
      return a.device == dev;  // another device's memory would need peer access
    case cudaMemoryTypeManaged:
      return true;
    case cudaMemoryTypeHost:
      // Mapped pinned memory; with unified addressing the device uses the host address.
      return a.devicePointer == p;
    default:
      return false;
  }
}

bool CudaApi::device_memory_of(const void *p, int dev) {
  GpuCallTimer timed(GpuCall::pointer_query);
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice && a.device == dev;
}

Status CudaApi::host_alloc(std::size_t bytes, void **p) {
  cudaError_t rc = cudaHostAlloc(p, bytes ? bytes : 1, cudaHostAllocPortable | cudaHostAllocMapped);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return make_status(MPI_ERR_NO_MEM, "cudaHostAlloc of %zu bytes failed: %s", bytes,
                       cudaGetErrorString(rc));
  }
  return {};
}

Status CudaApi::device_alloc(std::size_t bytes, void **p) {
  cudaError_t rc = cudaMalloc(p, bytes ? bytes : 1);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return make_status(MPI_ERR_NO_MEM, "cudaMalloc of %zu bytes failed: %s", bytes,
                       cudaGetErrorString(rc));
  }
  return {};
}

void CudaApi::host_free(void *p) {
  if (p && cudaFreeHost(p) != cudaSuccess) cudaGetLastError();
}

Status CudaApi::host_register(void *p, std::size_t bytes) {
  MPIX_CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
  return {};
}

void CudaApi::host_unregister(void *p) {
  if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

Status CudaApi::host_device_pointer(void *host, uint64_t *dev) {
  void *d = nullptr;
  MPIX_CUDA_CHECK(cudaHostGetDevicePointer(&d, host, 0));
  *dev = reinterpret_cast<uint64_t>(d);
  return {};
}

Status CudaApi::ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) {
  GpuCallTimer timed(GpuCall::pointer_query);
  if (!g_drv.pointer_attrs)
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "the CUDA driver has no cuPointerGetAttributes");
  CUdeviceptr start = 0;
  std::size_t n = 0;
  unsigned long long id = 0;
  unsigned int type = 0, managed = 0;
  // One query answers both "is it device memory" and "which allocation" (the plural call does
  // not fail on a pointer CUDA does not know: it leaves the values 0).
  CUpointer_attribute attrs[5] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                  CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void *data[5] = {&start, &n, &id, &type, &managed};
  MPIX_CU_CHECK(g_drv.pointer_attrs(5, attrs, data, reinterpret_cast<CUdeviceptr>(p)));
  if (type != CU_MEMORYTYPE_DEVICE || managed)
    return make_status(MPI_ERR_ARG, "not device memory of a cudaMalloc allocation");
  *base = static_cast<uint64_t>(start);
  *size = static_cast<uint64_t>(n);
  *buffer_id = static_cast<uint64_t>(id);
  return {};
}

Status CudaApi::mapped_range(const void *p, uint64_t *start, uint64_t *size) {
  GpuCallTimer timed(GpuCall::pointer_query);
  if (!g_drv.pointer_attrs)
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "the CUDA driver has no cuPointerGetAttributes");
  CUdeviceptr lo = 0;
  std::size_t n = 0;
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void *data[2] = {&lo, &n};
  MPIX_CU_CHECK(g_drv.pointer_attrs(2, attrs, data, reinterpret_cast<CUdeviceptr>(p)));
  *start = static_cast<uint64_t>(lo);
  *size = static_cast<uint64_t>(n);
  return {};
}

Status CudaApi::ipc_handle(uint64_t base, unsigned char (&handle)[64]) {
  cudaIpcMemHandle_t h;
  static_assert(sizeof h == sizeof handle, "cudaIpcMemHandle_t is 64 bytes");
  MPIX_CUDA_CHECK(cudaIpcGetMemHandle(&h, reinterpret_cast<void *>(base)));
  std::memcpy(handle, &h, sizeof h);
  return {};
}

Status CudaApi::ipc_open(const unsigned char (&handle)[64], void **base, bool *in_use) {
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle, sizeof h);
  const cudaError_t rc = cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
  *in_use = rc == cudaErrorAlreadyMapped;
  if (rc != cudaSuccess)
    return cuda_status(rc, "cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess)",
                       __FILE__, __LINE__);
  return {};
}

void CudaApi::ipc_close(void *base) {
  if (base && cudaIpcCloseMemHandle(base) != cudaSuccess) cudaGetLastError();
}

Status CudaApi::device_uuid(int dev, unsigned char (&uuid)[16]) {
  cudaDeviceProp prop{};
  MPIX_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  static_assert(sizeof prop.uuid == 16, "a CUDA device UUID is 16 bytes");
  std::memcpy(uuid, &prop.uuid, 16);
  return {};
}

bool CudaApi::can_access_peer(int dev, int peer) {
  int ok = 0;
  if (cudaDeviceCanAccessPeer(&ok, dev, peer) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return ok != 0;
}

}  // namespace mpix
