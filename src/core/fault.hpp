// Test only: fault injection into the enqueue path, so that a test can fail each step of an
// enqueue in turn and check that nothing is left behind (test/mpi/enqueue_fault_test.cpp).
// Internal: not in mpix/mpix.h, not exported by libmpix (tests link mpix_internal).
#pragma once

#include <atomic>

#include "base/status.hpp"

namespace mpix {

// Arms the hook: the @p step-th fault point passed from now on fails (1: the next one) with
// MPI_ERR_OTHER; 0 disarms it.
void fault_arm(int step);
// The name of the fault point that failed since the last fault_arm, or null.
const char *fault_fired();

extern std::atomic<int> g_fault_countdown;  // steps to go; 0: disarmed
Status fault_hit(const char *where);
// Whether the hook is armed: the enqueue path reads it once and skips its points otherwise.
inline bool fault_armed() {
  return __builtin_expect(g_fault_countdown.load(std::memory_order_relaxed) != 0, 0);
}
// A fault point: fails only when the hook is armed (one relaxed load otherwise).
inline Status fault_point(const char *where) {
  if (__builtin_expect(g_fault_countdown.load(std::memory_order_relaxed) == 0, 1)) return {};
  return fault_hit(where);
}

// The agent thread's own point, counted apart: the @p n-th op the agent fires from now on fails
// there, as if the provider had refused to post it (0 disarms).
void fault_arm_fire(int n);
extern std::atomic<int> g_fault_fire_countdown;
Status fault_fire_hit();
inline Status fault_fire_point() {
  if (__builtin_expect(g_fault_fire_countdown.load(std::memory_order_relaxed) == 0, 1)) return {};
  return fault_fire_hit();
}

// The receiving agent's own point, counted apart: the @p n-th GPU-direct receive from now on
// whose header matched fails as its agent copy starts (providers/mpi), as if the copy had
// been refused (0 disarms). fault_direct_recv_fired: whether it failed one since armed.
void fault_arm_direct_recv(int n);
bool fault_direct_recv_fired();
extern std::atomic<int> g_fault_direct_recv_countdown;
Status fault_direct_recv_hit();
inline Status fault_direct_recv_point() {
  if (__builtin_expect(g_fault_direct_recv_countdown.load(std::memory_order_relaxed) == 0, 1))
    return {};
  return fault_direct_recv_hit();
}

// The agent's pause right after it wrote an op's completion word (op_complete), so that a test
// can widen the window between the word and the rest of the completion: @p us microseconds
// for each op completed from now on (0: none).
void fault_delay_complete(int us);
extern std::atomic<int> g_complete_delay_us;
void complete_delay_hit();
inline void complete_delay_point() {
  if (__builtin_expect(g_complete_delay_us.load(std::memory_order_relaxed) == 0, 1)) return;
  complete_delay_hit();
}

}  // namespace mpix
