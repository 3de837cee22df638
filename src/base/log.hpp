// Leveled, per-subsystem logging: one line per event, prefixed with "mpix[rank]".
// MPIX_LOG_LEVEL and MPIX_LOG_SUBSYS choose what is printed (to stderr).
#pragma once

namespace mpix {

enum class LogLevel { error = 0, warn, info, debug, trace };

bool log_enabled(LogLevel level, const char *subsys);
void log_write(LogLevel level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Called once MPI is up so log lines carry the world rank.
void log_set_rank(int rank);

}  // namespace mpix

#define MPIX_LOG(level, subsys, ...)                                   \
  do {                                                                 \
    if (::mpix::log_enabled(::mpix::LogLevel::level, subsys))          \
      ::mpix::log_write(::mpix::LogLevel::level, subsys, __VA_ARGS__); \
  } while (0)
