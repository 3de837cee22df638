#include "core/type_probe.hpp"

#include <mutex>

#include "core/runtime.hpp"

namespace mpix {
namespace {

// The Runtime's probe communicator, freed with it at MPI_Finalize.
struct TypeProbe final : RuntimePart {
  std::mutex mu;
  MPI_Comm comm = MPI_COMM_NULL;
  ~TypeProbe() override {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

Status open(TypeProbe &p) {
  std::lock_guard<std::mutex> lk(p.mu);
  if (p.comm != MPI_COMM_NULL) return {};
  MPI_Comm c = MPI_COMM_NULL;
  MPIX_MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &c));
  MPIX_MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  p.comm = c;
  return {};
}

}  // namespace

Status type_probe_open(Runtime &rt) { return open(rt.part<TypeProbe>()); }

Status type_probe_comm(MPI_Comm *out) {
  TypeProbe &p = runtime().part<TypeProbe>();
  MPIX_TRY(open(p));  // made by runtime_init as a rule
  std::lock_guard<std::mutex> lk(p.mu);
  *out = p.comm;
  return {};
}

}  // namespace mpix
