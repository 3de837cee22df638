#include "core/type_probe.hpp"

#include <mutex>

#include "core/runtime.hpp"

namespace mpix {
namespace {

std::mutex g_mu;
MPI_Comm g_probe = MPI_COMM_NULL;

void free_probe() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_probe != MPI_COMM_NULL) MPI_Comm_free(&g_probe);
}

}  // namespace

Status type_probe_open() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_probe != MPI_COMM_NULL) return {};
  MPI_Comm c = MPI_COMM_NULL;
  MPIX_MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &c));
  MPIX_MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  g_probe = c;
  runtime_at_finalize(free_probe);
  return {};
}

Status type_probe_comm(MPI_Comm *out) {
  MPIX_TRY(type_probe_open());  // made by runtime_init as a rule
  std::lock_guard<std::mutex> lk(g_mu);
  *out = g_probe;
  return {};
}

}  // namespace mpix
