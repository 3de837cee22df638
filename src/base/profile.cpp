#include "base/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/base_settings.hpp"
#include "base/log.hpp"

namespace mpix {
namespace {

constexpr std::size_t kMaxSamples = 1 << 20;

// Process-wide, like the log it reports to: the Runtime prints and clears it at MPI_Finalize.
std::vector<uint32_t> &samples(ProfileStage s) {
  static auto *v = new std::vector<uint32_t>[static_cast<int>(ProfileStage::count_)];
  return v[static_cast<int>(s)];
}

// Short names of the stages, for MPIX_PROFILE_RAW's files (ProfileStage's order).
const char *const kShortNames[] = {"post",       "network",  "complete",
                                   "turnaround", "copy_out", "copy_in"};
static_assert(sizeof kShortNames / sizeof *kShortNames ==
                  static_cast<std::size_t>(ProfileStage::count_),
              "a short name per stage");

// MPIX_PROFILE_RAW: @p v, in the order taken, to PREFIX.RANK.STAGE.txt.
void write_raw(const char *prefix, int rank, int stage, const std::vector<uint32_t> &v) {
  const std::string path =
      std::string(prefix) + "." + std::to_string(rank) + "." + kShortNames[stage] + ".txt";
  FILE *f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr;
  for (std::size_t i = 0; ok && i < v.size(); ++i) ok = std::fprintf(f, "%u\n", v[i]) > 0;
  if (f && std::fclose(f) != 0) ok = false;
  if (!ok) MPIX_LOG(warn, "agent", "MPIX_PROFILE_RAW: could not write %s", path.c_str());
}

}  // namespace

bool profile_enabled() {
  static const bool on = setting_long(BaseSetting::profile) != 0;
  return on;
}

uint64_t profile_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void profile_record(ProfileStage s, uint64_t ns) {
  auto &v = samples(s);
  if (v.size() < kMaxSamples)
    v.push_back(static_cast<uint32_t>(std::min<uint64_t>(ns, UINT32_MAX)));
}

void profile_report() {
  if (!profile_enabled()) return;
  static const char *const kNames[] = {
      "agent post (trigger seen -> provider posted)",
      "network (posted -> provider reports complete)",
      "completion (complete -> completion word written)",
      "stream turnaround (completion written -> next trigger seen)",
      "agent copy out of device memory (issued -> done)",
      "agent copy into device memory (issued -> done)"};
  int rank = -1;
  if (const char *r = std::getenv("OMPI_COMM_WORLD_RANK")) rank = std::atoi(r);
  else if (const char *p = std::getenv("PMI_RANK")) rank = std::atoi(p);
  const char *raw = setting_str(BaseSetting::profile_raw);
  for (int i = 0; i < static_cast<int>(ProfileStage::count_); ++i) {
    auto &v = samples(static_cast<ProfileStage>(i));
    if (v.empty()) continue;
    if (std::strcmp(raw, "none") != 0) write_raw(raw, rank, i, v);
    std::sort(v.begin(), v.end());
    // The tail and the sum too: a few stalls of milliseconds (an allocation, a queued copy) move
    // a benchmark's mean and show in neither the median nor the 90th percentile.
    double sum = 0;
    for (uint32_t x : v) sum += x;
    std::fprintf(stderr,
                 "mpix[%d] profile: %-62s n=%-8zu median %8.2f us  p90 %8.2f us  p99 %8.2f us  "
                 "max %9.2f us  sum %9.3f ms\n",
                 rank, kNames[i], v.size(), v[v.size() / 2] / 1e3, v[v.size() * 9 / 10] / 1e3,
                 v[v.size() * 99 / 100] / 1e3, v.back() / 1e3, sum / 1e6);
    v.clear();
  }
}

}  // namespace mpix
