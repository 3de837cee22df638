#include "gpu/gpu_aware_mpi.hpp"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "base/log.hpp"
#include "gpu/gpu_settings.hpp"

namespace mpix {

bool parse_aware_setting(const char *value, AwareSetting *out) {
  if (!value) return false;
  static const struct {
    const char *word;
    AwareSetting s;
  } kWords[] = {
      {"auto", AwareSetting::automatic}, {"on", AwareSetting::on},     {"1", AwareSetting::on},
      {"true", AwareSetting::on},        {"yes", AwareSetting::on},    {"off", AwareSetting::off},
      {"0", AwareSetting::off},          {"false", AwareSetting::off}, {"no", AwareSetting::off}};
  for (const auto &w : kWords)
    if (std::strcmp(value, w.word) == 0) {
      *out = w.s;
      return true;
    }
  return false;
}

AwareChoice aware_choose(AwareSetting setting, AwareQuery query, StreamKind kind) {
  if (kind == StreamKind::host || kind == StreamKind::general)
    return {false, "host streams: nothing to decide (host buffers are not staged)"};
  if (kind == StreamKind::hip)
    return {false, "staged: HIP streams always stage (no HIP-aware MPI support in mpix)"};
  switch (setting) {
    case AwareSetting::off:
      return {false, "staged: MPIX_CUDA_AWARE=off"};
    case AwareSetting::on:
      return {true, query == AwareQuery::no
                        ? "direct: MPIX_CUDA_AWARE=on (the MPI library says it is not "
                          "CUDA-aware: device buffers may fail or crash in MPI)"
                        : "direct: MPIX_CUDA_AWARE=on"};
    case AwareSetting::automatic:
      break;
  }
  switch (query) {
    case AwareQuery::yes:
      return {true, "direct: the MPI library reports CUDA support (MPIX_CUDA_AWARE=auto)"};
    case AwareQuery::no:
      return {false, "staged: the MPI library reports no CUDA support (MPIX_CUDA_AWARE=auto)"};
    case AwareQuery::unknown:
      break;
  }
  return {false, "staged: the MPI library has no CUDA support query (MPIX_CUDA_AWARE=auto)"};
}

AwareQuery aware_query_cuda(std::string *how) {
  // MPICH's general query first: its MPIX_Query_cuda_support may be a compatibility stub.
  using GpuQuery = int (*)(int, int *);
  if (void *f = dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support")) {
    constexpr int kMpichCuda = 0;  // MPIX_GPU_SUPPORT_CUDA
    int ok = 0;
    if (reinterpret_cast<GpuQuery>(f)(kMpichCuda, &ok) == MPI_SUCCESS) {
      *how = ok ? "MPIX_GPU_query_support(CUDA) = 1" : "MPIX_GPU_query_support(CUDA) = 0";
      return ok ? AwareQuery::yes : AwareQuery::no;
    }
  }
  using CudaQuery = int (*)();
  if (void *f = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support")) {
    const int ok = reinterpret_cast<CudaQuery>(f)();
    *how = ok ? "MPIX_Query_cuda_support() = 1" : "MPIX_Query_cuda_support() = 0";
    return ok ? AwareQuery::yes : AwareQuery::no;
  }
  *how = "no MPIX_Query_cuda_support or MPIX_GPU_query_support in the MPI library";
  return AwareQuery::unknown;
}

const AwareChoice &aware_choice(StreamKind kind) {
  static std::once_flag once;
  static AwareChoice cuda;
  if (kind != StreamKind::cuda) {
    static const AwareChoice host =
        aware_choose(AwareSetting::off, AwareQuery::unknown, StreamKind::host);
    static const AwareChoice hip =
        aware_choose(AwareSetting::off, AwareQuery::unknown, StreamKind::hip);
    return kind == StreamKind::hip ? hip : host;
  }
  std::call_once(once, [] {
    AwareSetting s = AwareSetting::automatic;
    const char *v = setting_str(GpuSetting::cuda_aware);
    if (!parse_aware_setting(v, &s))
      MPIX_LOG(warn, "cuda", "MPIX_CUDA_AWARE=\"%s\" is not auto, on or off: using auto", v);
    std::string how;
    const AwareQuery q = s == AwareSetting::automatic || s == AwareSetting::on
                             ? aware_query_cuda(&how)
                             : AwareQuery::unknown;
    cuda = aware_choose(s, q, StreamKind::cuda);
    if (!how.empty()) cuda.why += " [" + how + "]";
    MPIX_LOG(info, "cuda", "device buffers to MPI: %s", cuda.why.c_str());
  });
  return cuda;
}

}  // namespace mpix
