#include "core/thread_level.hpp"

#include <mpi.h>

#include <atomic>

namespace mpix {
namespace {

std::atomic<bool> g_wrapped{false};
std::atomic<int> g_reported{MPI_THREAD_SINGLE};

}  // namespace

void thread_level_record(int asked, int got) {
  g_reported.store(asked < got ? asked : got, std::memory_order_relaxed);
  g_wrapped.store(true, std::memory_order_release);
}

bool thread_level_wrapped() { return g_wrapped.load(std::memory_order_acquire); }

int thread_level_reported() { return g_reported.load(std::memory_order_relaxed); }

const char *thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "an unknown thread level";
}

}  // namespace mpix
