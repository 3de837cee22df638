#include "base/profile.hpp"

#include <algorithm>
#include <atomic>
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

// GPU runtime calls: [mpix's threads?][kind], calls and nanoseconds.
struct GpuCallSums {
  std::atomic<uint64_t> calls{0}, ns{0};
};
GpuCallSums g_gpu_calls[2][static_cast<int>(GpuCall::count_)];
std::atomic<uint64_t> g_enqueue_calls{0};
thread_local bool t_mpix_thread = false;

const char *const kGpuCallNames[] = {"pointer queries", "stream memory operations",
                                     "kernel launches", "copies",
                                     "host functions",  "device / capture queries"};
static_assert(sizeof kGpuCallNames / sizeof *kGpuCallNames ==
                  static_cast<std::size_t>(GpuCall::count_),
              "a name per kind of GPU call");

void report_gpu_calls(int rank) {
  const uint64_t enq = g_enqueue_calls.exchange(0, std::memory_order_relaxed);
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < static_cast<int>(GpuCall::count_); ++k) {
      GpuCallSums &g = g_gpu_calls[t][k];
      const uint64_t n = g.calls.exchange(0, std::memory_order_relaxed);
      const uint64_t ns = g.ns.exchange(0, std::memory_order_relaxed);
      if (n == 0) continue;
      char per[64] = "";
      if (t == 0 && enq > 0)
        std::snprintf(per, sizeof per, "  %6.2f per enqueue call (%llu calls)",
                      static_cast<double>(n) / static_cast<double>(enq),
                      static_cast<unsigned long long>(enq));
      std::fprintf(stderr,
                   "mpix[%d] profile: GPU calls, %-20s %-26s n=%-8llu mean %7.2f us  sum %9.3f "
                   "ms%s\n",
                   rank, t ? "mpix's threads:" : "application threads:", kGpuCallNames[k],
                   static_cast<unsigned long long>(n), static_cast<double>(ns) / 1e3 / n,
                   static_cast<double>(ns) / 1e6, per);
    }
}

// Enqueue calls' parts: [kind][part], calls and nanoseconds (GpuCallSums' shape).
GpuCallSums g_enqueue_parts[static_cast<int>(EnqueueKind::count_)]
                           [static_cast<int>(EnqueuePart::count_)];

void report_enqueue_parts(int rank) {
  static const char *const kKinds[] = {"sends", "receives", "other ops"};
  static const char *const kParts[] = {"make", "staging", "request", "submit", "trigger"};
  static_assert(sizeof kKinds / sizeof *kKinds == static_cast<std::size_t>(EnqueueKind::count_),
                "a name per kind");
  static_assert(sizeof kParts / sizeof *kParts == static_cast<std::size_t>(EnqueuePart::count_),
                "a name per part");
  for (int k = 0; k < static_cast<int>(EnqueueKind::count_); ++k) {
    // Every call passes make; later parts may be skipped by a failing call.
    const uint64_t n = g_enqueue_parts[k][0].calls.load(std::memory_order_relaxed);
    if (n == 0) continue;
    char line[512];
    int at = std::snprintf(line, sizeof line,
                           "mpix[%d] profile: enqueue calls, %-9s n=%-8llu mean us:", rank,
                           kKinds[k], static_cast<unsigned long long>(n));
    double sum = 0;
    for (int p = 0; p < static_cast<int>(EnqueuePart::count_); ++p) {
      GpuCallSums &g = g_enqueue_parts[k][p];
      const uint64_t c = g.calls.exchange(0, std::memory_order_relaxed);
      const uint64_t ns = g.ns.exchange(0, std::memory_order_relaxed);
      const double mean = c ? static_cast<double>(ns) / 1e3 / static_cast<double>(c) : 0.0;
      sum += mean;
      if (at > 0 && static_cast<std::size_t>(at) < sizeof line)
        at += std::snprintf(line + at, sizeof line - at, " %s %.3f", kParts[p], mean);
    }
    std::fprintf(stderr, "%s, whole %.3f\n", line, sum);
  }
}

}  // namespace

void profile_enqueue_part(EnqueueKind k, EnqueuePart p, uint64_t ns) {
  GpuCallSums &g = g_enqueue_parts[static_cast<int>(k)][static_cast<int>(p)];
  g.calls.fetch_add(1, std::memory_order_relaxed);
  g.ns.fetch_add(ns, std::memory_order_relaxed);
}

void profile_enqueue_parts(EnqueueKind k, EnqueuePart p, uint64_t *calls, uint64_t *ns) {
  const GpuCallSums &g = g_enqueue_parts[static_cast<int>(k)][static_cast<int>(p)];
  *calls = g.calls.load(std::memory_order_relaxed);
  *ns = g.ns.load(std::memory_order_relaxed);
}

void profile_gpu_call(GpuCall k, uint64_t ns) {
  GpuCallSums &g = g_gpu_calls[t_mpix_thread ? 1 : 0][static_cast<int>(k)];
  g.calls.fetch_add(1, std::memory_order_relaxed);
  g.ns.fetch_add(ns, std::memory_order_relaxed);
}

void profile_gpu_calls(bool mpix_threads, GpuCall k, uint64_t *calls, uint64_t *ns) {
  const GpuCallSums &g = g_gpu_calls[mpix_threads ? 1 : 0][static_cast<int>(k)];
  *calls = g.calls.load(std::memory_order_relaxed);
  *ns = g.ns.load(std::memory_order_relaxed);
}

void profile_mark_mpix_thread() { t_mpix_thread = true; }

namespace profile_detail {

std::atomic<int> g_state{0};

// Read once (as before, a static): threads that race here read the same setting.
int read_state() {
  const int s = setting_long(BaseSetting::profile) != 0 ? 2 : 1;
  g_state.store(s, std::memory_order_relaxed);
  return s;
}

void count_enqueue_call() { g_enqueue_calls.fetch_add(1, std::memory_order_relaxed); }

}  // namespace profile_detail

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
  report_gpu_calls(rank);
  report_enqueue_parts(rank);
}

}  // namespace mpix
