#include "base/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/base_settings.hpp"

namespace mpix {
namespace {

const char *const kLevelNames[] = {"error", "warn", "info", "debug", "trace"};

struct Config {
  int level = 1;
  std::string subsys;  // ",a,b," or empty for all
  Config() {
    const char *lv = setting_str(BaseSetting::log_level);
    for (int i = 0; i < 5; ++i)
      if (std::strcmp(lv, kLevelNames[i]) == 0) level = i;
    std::string s = setting_str(BaseSetting::log_subsys);
    if (s != "all") subsys = "," + s + ",";
  }
};

const Config &config() {
  static const Config c;
  return c;
}

std::atomic<int> g_rank{-1};

}  // namespace

void log_set_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

bool log_enabled(LogLevel level, const char *subsys) {
  const Config &c = config();
  if (static_cast<int>(level) > c.level) return false;
  if (c.subsys.empty() || level == LogLevel::error) return true;
  return c.subsys.find("," + std::string(subsys) + ",") != std::string::npos;
}

void log_write(LogLevel level, const char *subsys, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // One fprintf per line so lines from threads and ranks do not interleave mid-line.
  std::fprintf(stderr, "mpix[%d] %s %s: %s\n", g_rank.load(std::memory_order_relaxed),
               kLevelNames[static_cast<int>(level)], subsys, msg);
}

}  // namespace mpix
