#include "core/fault.hpp"

namespace mpix {

std::atomic<int> g_fault_countdown{0};
namespace {
std::atomic<const char *> g_fired{nullptr};
}

void fault_arm(int step) {
  g_fired.store(nullptr);
  g_fault_countdown.store(step < 0 ? 0 : step);
}

const char *fault_fired() { return g_fired.load(); }

Status fault_hit(const char *where) {
  int v = g_fault_countdown.load();
  while (v > 0 && !g_fault_countdown.compare_exchange_weak(v, v - 1)) {
  }
  if (v != 1) return {};
  g_fired.store(where);
  return make_status(MPI_ERR_OTHER, "injected fault at %s (test hook)", where);
}

}  // namespace mpix
