// The host stream runs work in order on its worker, and write/wait values behave like the
// CUDA stream memory operations they stand in for.
#include <dirent.h>
#include <mpi.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "address_space_limit.hpp"
#include "catch.hpp"
#include "mpix/mpix_host_stream.h"

TEST_CASE("host stream runs host functions in order", "[host_stream]") {
  mpix_host_stream_t s = nullptr;
  REQUIRE(mpix_host_stream_create(&s) == 0);
  std::vector<int> seen;
  struct Arg {
    std::vector<int> *seen;
    int v;
  };
  std::vector<Arg> args;
  args.reserve(100);
  for (int i = 0; i < 100; ++i) {
    args.push_back({&seen, i});
    REQUIRE(mpix_host_stream_launch(
                s,
                [](void *p) {
                  auto *a = static_cast<Arg *>(p);
                  a->seen->push_back(a->v);
                },
                &args.back()) == 0);
  }
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  REQUIRE(seen.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(seen[i] == i);
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
  CHECK(s == nullptr);
}

namespace {

// Threads of this process whose name (/proc/self/task/*/comm) is @p name.
int threads_named(const std::string &name) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  while (dirent *e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string comm;
    if (std::getline(f, comm) && comm == name) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("a host stream's worker is a thread named mpix-hstream while the stream lives",
          "[host_stream]") {
  const int before = threads_named("mpix-hstream");
  REQUIRE(before >= 0);
  mpix_host_stream_t s = nullptr;
  REQUIRE(mpix_host_stream_create(&s) == 0);
  // Once an item has run, the worker has named itself (the first thing it does).
  REQUIRE(mpix_host_stream_launch(
              s, [](void *) {}, nullptr) == 0);
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  CHECK(threads_named("mpix-hstream") == before + 1);
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
  CHECK(threads_named("mpix-hstream") == before);
}

TEST_CASE("several threads enqueue on one host stream: each item runs once, in its thread's order",
          "[host_stream]") {
  mpix_host_stream_t s = nullptr;
  REQUIRE(mpix_host_stream_create(&s) == 0);
  constexpr int kThreads = 4, kPerThread = 20000;
  struct Arg {
    std::vector<int> *ran;  // its thread's: the worker appends the item's index
    int i;
  };
  std::vector<std::vector<int>> ran(kThreads);
  std::vector<std::vector<Arg>> args(kThreads);
  std::vector<int> failed(kThreads, 0), seen(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    ran[t].reserve(kPerThread);
    args[t].reserve(kPerThread);
    for (int i = 0; i < kPerThread; ++i) args[t].push_back({&ran[t], i});
  }
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i)
        failed[t] += mpix_host_stream_launch(
                         s,
                         [](void *p) {
                           auto *a = static_cast<Arg *>(p);
                           a->ran->push_back(a->i);
                         },
                         &args[t][i]) != 0;
      // Waits for this thread's items at least (the others' may still be coming).
      failed[t] += mpix_host_stream_synchronize(s) != 0;
      seen[t] = static_cast<int>(ran[t].size());
    });
  for (auto &th : threads) th.join();
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  for (int t = 0; t < kThreads; ++t) {
    CHECK(failed[t] == 0);
    CHECK(seen[t] == kPerThread);
    REQUIRE(ran[t].size() == static_cast<std::size_t>(kPerThread));
    int out_of_order = 0;
    for (int i = 0; i < kPerThread; ++i) out_of_order += ran[t][i] != i;
    CHECK(out_of_order == 0);
  }
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
}

TEST_CASE("wait_value holds later work until the value is reached", "[host_stream]") {
  mpix_host_stream_t s = nullptr;
  REQUIRE(mpix_host_stream_create(&s) == 0);
  alignas(8) uint64_t gate = 0, out = 0;
  std::atomic<int> ran{0};
  REQUIRE(mpix_host_stream_wait_value64(s, &gate, 3) == 0);
  REQUIRE(mpix_host_stream_launch(
              s, [](void *p) { static_cast<std::atomic<int> *>(p)->store(1); }, &ran) == 0);
  REQUIRE(mpix_host_stream_write_value64(s, &out, 7) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ran.load() == 0);
  __atomic_store_n(&gate, 2, __ATOMIC_RELEASE);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ran.load() == 0);
  __atomic_store_n(&gate, 3, __ATOMIC_RELEASE);
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  CHECK(ran.load() == 1);
  CHECK(out == 7);
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
}

TEST_CASE("wait_value compares cyclically like CU_STREAM_WAIT_VALUE_GEQ", "[host_stream]") {
  mpix_host_stream_t s = nullptr;
  REQUIRE(mpix_host_stream_create(&s) == 0);
  alignas(8) uint64_t word = ~uint64_t{0};  // -1 is "before" 1 cyclically: must not pass
  std::atomic<int> ran{0};
  REQUIRE(mpix_host_stream_wait_value64(s, &word, 1) == 0);
  REQUIRE(mpix_host_stream_launch(
              s, [](void *p) { static_cast<std::atomic<int> *>(p)->store(1); }, &ran) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ran.load() == 0);
  __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  CHECK(ran.load() == 1);
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
}

TEST_CASE("host stream calls refuse bad handles", "[host_stream]") {
  mpix_host_stream_t s = nullptr;
  CHECK(mpix_host_stream_create(nullptr) != 0);
  CHECK(mpix_host_stream_synchronize(nullptr) != 0);
  REQUIRE(mpix_host_stream_create(&s) == 0);
  mpix_host_stream_t copy = s;
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
  CHECK(mpix_host_stream_destroy(&copy) != 0);  // double destroy
  CHECK(mpix_host_stream_launch(
            copy, [](void *) {}, nullptr) != 0);
}

// Hidden ([.]): run alone by CTest (unit_host_stream_thread_failure), see CMakeLists.txt.
TEST_CASE("a worker thread that cannot be started is an error class, not an abort",
          "[.thread_failure]") {
  if (!mpix_test::address_space_limit_usable()) {
    WARN("skipped: sanitizer build (an address-space limit trips the sanitizer itself)");
    return;
  }
  mpix_host_stream_t s = nullptr;
  int rc = 0;
  {
    mpix_test::AddressSpaceLimit lim;
    REQUIRE(lim.ok());
    // std::thread throws std::system_error here: mpix must turn it into an error class.
    rc = mpix_host_stream_create(&s);
  }
  CHECK((rc == MPI_ERR_OTHER || rc == MPI_ERR_NO_MEM));
  CHECK(s == nullptr);
  // Nothing was left behind, and with memory back a stream starts and works.
  REQUIRE(mpix_host_stream_create(&s) == 0);
  std::atomic<int> ran{0};
  REQUIRE(mpix_host_stream_launch(
              s, [](void *p) { static_cast<std::atomic<int> *>(p)->store(1); }, &ran) == 0);
  REQUIRE(mpix_host_stream_synchronize(s) == 0);
  CHECK(ran.load() == 1);
  REQUIRE(mpix_host_stream_destroy(&s) == 0);
}
