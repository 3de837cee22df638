// Stream backends compiled into this build (the generated backend_table.inc lists their
// entries, backend_entry.hpp), and names for the enums of gpu/backend.hpp.
#include <cstring>
#include <string>

#include "gpu/backend.hpp"
#include "gpu/backend_entry.hpp"

namespace mpix {

#define MPIX_BACKEND_ENTRY(n) extern const BackendEntry k_##n##_backend;
#include "backend_table.inc"
#undef MPIX_BACKEND_ENTRY

namespace {

const BackendEntry *const kBackends[] = {
#define MPIX_BACKEND_ENTRY(n) &k_##n##_backend,
#include "backend_table.inc"
#undef MPIX_BACKEND_ENTRY
};

// What to say about a kind whose backend this build lacks.
struct Missing {
  StreamKind kind;
  const char *what;
};
const Missing kMissing[] = {
    {StreamKind::cuda,
     "cudaStream_t streams need the CUDA backend, which this build of mpix does not have "
     "(configure with -DMPIX_ENABLE_CUDA=ON)"},
    {StreamKind::hip,
     "hipStream_t streams need the HIP backend, which this build of mpix does not have "
     "(configure with -DMPIX_ENABLE_HIP=ON)"},
};

}  // namespace

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
  for (const BackendEntry *e : kBackends)
    if (e->kinds[0] == kind || e->kinds[1] == kind) return e->get(out);
  for (const Missing &m : kMissing)
    if (m.kind == kind) return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "%s", m.what);
  return make_status(MPI_ERR_ARG, "unknown stream kind");
}

const char *backends_built() {
  static const std::string names = [] {
    std::string n;
    for (const BackendEntry *e : kBackends) n += (n.empty() ? "" : " ") + std::string(e->name);
    return n;
  }();
  return names.c_str();
}

}  // namespace mpix
