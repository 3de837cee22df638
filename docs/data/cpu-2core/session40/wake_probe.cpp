// Probe, not built by CMake (g++ -O2 -pthread wake_probe.cpp; ./a.out MODE): what a thread pays to
// wake another that sleeps, 20,000 times (median / p90 ns of the waker's call): MODE 0 a condition
// variable's broadcast under its mutex (the Notifier's way), 2 the broadcast after the mutex, 1 a
// FUTEX_WAKE on the sleeper's own word. Session 40, the 2-core machine (wake_probe.txt).
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
using clk = std::chrono::steady_clock;
std::atomic<int> state{0};  // 0 awake, 1 asleep
std::atomic<uint64_t> epoch{0};
std::mutex mu;
std::condition_variable cv;
std::atomic<int> sleepers{0};
std::atomic<bool> stop{false};
std::atomic<int> acks{0};
int mode;
static long fut(void *a, int op, int v) {
  return syscall(SYS_futex, a, op, v, nullptr, nullptr, 0);
}
void waiter() {
  while (!stop) {
    uint64_t e = epoch.load();
    state.store(1);
    if (mode == 0 || mode == 2) {
      sleepers++;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait_for(lk, std::chrono::milliseconds(100), [&] { return epoch.load() != e || stop; });
      }
      sleepers--;
    } else {
      while (state.load() == 1 && !stop) fut(&state, FUTEX_WAIT_PRIVATE, 1);
    }
    state.store(0);
    acks++;
  }
}
int main(int argc, char **argv) {
  mode = atoi(argv[1]);
  std::thread t(waiter);
  std::vector<double> ns;
  for (int i = 0; i < 20000; ++i) {
    while (state.load() != 1) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    int a = acks.load();
    auto t0 = clk::now();
    if (mode == 0) {
      epoch++;
      if (sleepers.load() > 0) {
        std::lock_guard<std::mutex> lk(mu);
        cv.notify_all();
      }
    } else if (mode == 2) {
      epoch++;
      if (sleepers.load() > 0) {
        { std::lock_guard<std::mutex> lk(mu); }
        cv.notify_all();
      }
    } else {
      int exp = 1;
      if (state.compare_exchange_strong(exp, 2)) fut(&state, FUTEX_WAKE_PRIVATE, 1);
    }
    auto t1 = clk::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    while (acks.load() == a) {
    }
  }
  stop = true;
  epoch++;
  state.store(0);
  fut(&state, FUTEX_WAKE_PRIVATE, 1);
  {
    std::lock_guard<std::mutex> lk(mu);
    cv.notify_all();
  }
  t.join();
  std::sort(ns.begin(), ns.end());
  printf("mode %d: median %.0f ns p90 %.0f\n", mode, ns[ns.size() / 2], ns[ns.size() * 9 / 10]);
}
