// Picks the device the example computes on by name.
#include "device.hpp"

namespace jacobi {

std::unique_ptr<Device> make_device(const std::string &kind, MPI_Comm comm, std::string *why) {
  if (kind == "host") return make_host_device();
#ifdef JACOBI_HAVE_CUDA
  if (kind == "cuda" || kind == "cuda-pdl") return make_cuda_device(comm, why, kind == "cuda-pdl");
#else
  (void)comm;
  if (kind == "cuda" || kind == "cuda-pdl") {
    *why = "this build has no CUDA (configure with -DMPIX_ENABLE_CUDA=ON)";
    return nullptr;
  }
#endif
  *why = "unknown device \"" + kind + "\" (host, cuda or cuda-pdl)";
  return nullptr;
}

}  // namespace jacobi
