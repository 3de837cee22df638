#include "core/fault.hpp"

#include <chrono>
#include <thread>

namespace mpix {

std::atomic<int> g_fault_countdown{0};
std::atomic<int> g_fault_fire_countdown{0};
std::atomic<int> g_complete_delay_us{0};
std::atomic<int> g_fault_direct_recv_countdown{0};

void fault_delay_complete(int us) { g_complete_delay_us.store(us < 0 ? 0 : us); }

void complete_delay_hit() {
  std::this_thread::sleep_for(std::chrono::microseconds(g_complete_delay_us.load()));
}
namespace {
std::atomic<const char *> g_fired{nullptr};
}

void fault_arm(int step) {
  g_fired.store(nullptr);
  g_fault_countdown.store(step < 0 ? 0 : step);
}

const char *fault_fired() { return g_fired.load(); }

namespace {
// Counts @p c down; true when this call took it from 1 to 0.
bool count_down(std::atomic<int> &c) {
  int v = c.load();
  while (v > 0 && !c.compare_exchange_weak(v, v - 1)) {
  }
  return v == 1;
}
}  // namespace

void fault_arm_fire(int n) { g_fault_fire_countdown.store(n < 0 ? 0 : n); }

Status fault_fire_hit() {
  if (!count_down(g_fault_fire_countdown)) return {};
  return make_status(MPI_ERR_OTHER, "injected fault at fire (test hook)");
}

namespace {
std::atomic<bool> g_direct_recv_fired{false};
}

void fault_arm_direct_recv(int n) {
  g_direct_recv_fired.store(false);
  g_fault_direct_recv_countdown.store(n < 0 ? 0 : n);
}

bool fault_direct_recv_fired() { return g_direct_recv_fired.load(); }

Status fault_direct_recv_hit() {
  if (!count_down(g_fault_direct_recv_countdown)) return {};
  g_direct_recv_fired.store(true);
  return make_status(MPI_ERR_OTHER, "injected fault at a GPU-direct receive's copy (test hook)");
}

Status fault_hit(const char *where) {
  if (!count_down(g_fault_countdown)) return {};
  g_fired.store(where);
  return make_status(MPI_ERR_OTHER, "injected fault at %s (test hook)", where);
}

}  // namespace mpix
