#include "core/type_release.hpp"

#include <atomic>
#include <mutex>
#include <vector>

namespace mpix {
namespace {

std::mutex g_mu;
std::vector<MPI_Datatype> g_queued;
std::atomic<bool> g_any{false};

}  // namespace

void type_release_later(MPI_Datatype dt) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_queued.push_back(dt);
  g_any.store(true, std::memory_order_release);
}

void type_release_run() {
  if (!g_any.load(std::memory_order_acquire)) return;
  std::vector<MPI_Datatype> types;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    types.swap(g_queued);
    g_any.store(false, std::memory_order_relaxed);
  }
  for (MPI_Datatype &t : types) MPI_Type_free(&t);
}

}  // namespace mpix
