// A watchdog for the GPU tests: a hang (a stream wait never released, a launch that never
// returns) becomes a failure that says where it stopped, instead of a CTest timeout that says
// nothing. Tests name what they are doing with watchdog_stage("..."); if the process has not
// finished within the time given, the watchdog thread prints the rank and the last stage and
// ends the process (mpirun then takes the other ranks down).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace mpix_gpu_test {

inline std::atomic<const char *> &watchdog_stage_ref() {
  static std::atomic<const char *> stage{"(start)"};
  return stage;
}
// @p what must be a string literal (or live until exit).
inline void watchdog_stage(const char *what) { watchdog_stage_ref().store(what); }

class Watchdog {
 public:
  // @p seconds <= 0: off. @p rank only labels the message.
  Watchdog(int seconds, int rank) : rank_(rank) {
    if (seconds <= 0) return;
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lk(mu_);
      if (cv_.wait_for(lk, std::chrono::seconds(seconds), [this] { return done_; })) return;
      std::fprintf(stderr,
                   "rank %d: WATCHDOG: no finish within %d s; last stage: %s\n"
                   "  (a stream wait that was never released, or a call that never returned)\n",
                   rank_, seconds, watchdog_stage_ref().load());
      std::fflush(stderr);
      std::_Exit(124);
    });
  }
  ~Watchdog() { disarm(); }
  void disarm() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Seconds from the environment variable @p var, else @p fallback.
  static int seconds_from_env(const char *var, int fallback) {
    const char *v = std::getenv(var);
    return v && *v ? std::atoi(v) : fallback;
  }

 private:
  int rank_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace mpix_gpu_test
