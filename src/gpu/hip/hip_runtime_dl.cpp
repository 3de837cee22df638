// The HIP runtime functions the HIP backend calls, defined here and forwarded to libamdhip64
// opened at run time (base/runtime_lib.hpp): libmpix does not link libamdhip64, so it loads on
// machines without ROCm, and the HIP backend reports why it cannot run there. Each definition
// has the header's prototype (the compiler checks it against hip_runtime_api.h); when the
// library or a symbol is missing, the call fails with hipErrorSharedObjectInitFailed.
#include <hip/hip_runtime_api.h>

#include "base/runtime_lib.hpp"
#include "gpu/hip/hip_dl.hpp"

namespace mpix {

RuntimeLib &hip_runtime_lib() {
  static RuntimeLib lib("libamdhip64 (HIP backend)",
                        {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"});
  return lib;
}

}  // namespace mpix

namespace {

template <class Fn>
Fn resolve(const char *name) {
  return reinterpret_cast<Fn>(mpix::hip_runtime_lib().sym(name));
}

}  // namespace

// One forwarding definition: ret name(params) { return real(args); }.
#define MPIX_HIP_FORWARD(ret, name, params, args)   \
  extern "C" ret name params {                      \
    using Fn = ret(*) params;                       \
    static const Fn fn = resolve<Fn>(#name);        \
    if (!fn) return hipErrorSharedObjectInitFailed; \
    return fn args;                                 \
  }

MPIX_HIP_FORWARD(hipError_t, hipDeviceGetAttribute,
                 (int *pi, hipDeviceAttribute_t attr, int deviceId), (pi, attr, deviceId))
MPIX_HIP_FORWARD(hipError_t, hipDriverGetVersion, (int *v), (v))
MPIX_HIP_FORWARD(hipError_t, hipRuntimeGetVersion, (int *v), (v))
MPIX_HIP_FORWARD(hipError_t, hipGetDevice, (int *d), (d))
MPIX_HIP_FORWARD(hipError_t, hipSetDevice, (int d), (d))
MPIX_HIP_FORWARD(hipError_t, hipGetDeviceCount, (int *n), (n))
MPIX_HIP_FORWARD(hipError_t, hipGetDeviceProperties, (hipDeviceProp_t * p, int d), (p, d))
MPIX_HIP_FORWARD(hipError_t, hipGetLastError, (void), ())
MPIX_HIP_FORWARD(hipError_t, hipHostFree, (void *p), (p))
MPIX_HIP_FORWARD(hipError_t, hipHostGetDevicePointer, (void **d, void *h, unsigned int f),
                 (d, h, f))
MPIX_HIP_FORWARD(hipError_t, hipHostMalloc, (void **p, size_t n, unsigned int f), (p, n, f))
MPIX_HIP_FORWARD(hipError_t, hipHostRegister, (void *p, size_t n, unsigned int f), (p, n, f))
MPIX_HIP_FORWARD(hipError_t, hipHostUnregister, (void *p), (p))
MPIX_HIP_FORWARD(hipError_t, hipMemcpy2DAsync,
                 (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                  size_t height, hipMemcpyKind kind, hipStream_t s),
                 (dst, dpitch, src, spitch, width, height, kind, s))
MPIX_HIP_FORWARD(hipError_t, hipMemcpyAsync,
                 (void *dst, const void *src, size_t n, hipMemcpyKind kind, hipStream_t s),
                 (dst, src, n, kind, s))
MPIX_HIP_FORWARD(hipError_t, hipPointerGetAttributes, (hipPointerAttribute_t * a, const void *p),
                 (a, p))
MPIX_HIP_FORWARD(hipError_t, hipStreamAddCallback,
                 (hipStream_t s, hipStreamCallback_t cb, void *data, unsigned int f),
                 (s, cb, data, f))
MPIX_HIP_FORWARD(hipError_t, hipStreamCreateWithFlags, (hipStream_t * s, unsigned int f), (s, f))
MPIX_HIP_FORWARD(hipError_t, hipStreamGetFlags, (hipStream_t s, unsigned int *f), (s, f))
MPIX_HIP_FORWARD(hipError_t, hipStreamIsCapturing, (hipStream_t s, hipStreamCaptureStatus *st),
                 (s, st))
MPIX_HIP_FORWARD(hipError_t, hipStreamSynchronize, (hipStream_t s), (s))
MPIX_HIP_FORWARD(hipError_t, hipStreamWaitValue64,
                 (hipStream_t s, void *p, uint64_t v, unsigned int f, uint64_t mask),
                 (s, p, v, f, mask))
MPIX_HIP_FORWARD(hipError_t, hipStreamWriteValue64,
                 (hipStream_t s, void *p, uint64_t v, unsigned int f), (s, p, v, f))

// The error strings answer even without the library, saying why it is missing.
extern "C" const char *hipGetErrorName(hipError_t e) {
  using Fn = const char *(*)(hipError_t);
  static const Fn fn = resolve<Fn>("hipGetErrorName");
  return fn ? fn(e) : "hipErrorSharedObjectInitFailed";
}

extern "C" const char *hipGetErrorString(hipError_t e) {
  using Fn = const char *(*)(hipError_t);
  static const Fn fn = resolve<Fn>("hipGetErrorString");
  if (fn) return fn(e);
  static const std::string why = mpix::hip_runtime_lib().describe();
  return why.c_str();
}
