// Backends compiled into this build, and names for the enums of gpu/backend.hpp.
#include "gpu/backend.hpp"
#include "gpu/host/host_backend.hpp"

#ifdef MPIX_HAVE_CUDA
#include "gpu/cuda/cuda_backend.hpp"
#endif
#ifdef MPIX_HAVE_HIP
#include "gpu/hip/hip_backend.hpp"
#endif

namespace mpix {

const char *stream_kind_name(StreamKind k) {
  static const char *const kNames[] = {"general", "mpix_host_stream", "cudaStream_t",
                                       "hipStream_t"};
  return kNames[static_cast<int>(k)];
}

const char *trigger_mode_name(TriggerMode m) {
  static const char *const kNames[] = {"memop", "hostfn", "kernel"};
  return kNames[static_cast<int>(m)];
}

const char *mem_kind_name(MemKind k) {
  static const char *const kNames[] = {"host", "pinned_host", "device", "managed"};
  return kNames[static_cast<int>(k)];
}

Status backend_get(StreamKind kind, Backend **out) {
  switch (kind) {
    case StreamKind::general:
    case StreamKind::host:
      *out = host_backend();
      return {};
    case StreamKind::cuda:
#ifdef MPIX_HAVE_CUDA
      return cuda_backend_get(out);
#else
      return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                         "cudaStream_t streams need the CUDA backend, which this build of mpix "
                         "does not have (configure with -DMPIX_ENABLE_CUDA=ON)");
#endif
    case StreamKind::hip:
#ifdef MPIX_HAVE_HIP
      return hip_backend_get(out);
#else
      return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                         "hipStream_t streams need the HIP backend, which this build of mpix "
                         "does not have (configure with -DMPIX_ENABLE_HIP=ON)");
#endif
  }
  return make_status(MPI_ERR_ARG, "unknown stream kind");
}

const char *backends_built() {
  return "host"
#ifdef MPIX_HAVE_CUDA
         " cuda"
#endif
#ifdef MPIX_HAVE_HIP
         " hip"
#endif
      ;
}

}  // namespace mpix
