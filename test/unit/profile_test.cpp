// MPIX_PROFILE's count of GPU runtime calls (base/profile.hpp): a timed scope is one call of its
// kind, on the application's side or on mpix's threads (those name_this_thread marked), and the
// report at MPI_Finalize hands the sums out once. Run with MPIX_PROFILE=1 (test/unit/CMakeLists).
#include "base/profile.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

#include "base/internal_thread.hpp"
#include "catch.hpp"

using mpix::GpuCall;

namespace {

uint64_t calls_of(bool mpix_threads, GpuCall k, uint64_t *ns = nullptr) {
  uint64_t n = 0, t = 0;
  mpix::profile_gpu_calls(mpix_threads, k, &n, &t);
  if (ns) *ns = t;
  return n;
}

}  // namespace

TEST_CASE("GPU runtime calls are counted and timed per kind and per side", "[profile]") {
  REQUIRE(mpix::profile_enabled());
  mpix::profile_report();  // starts from zero
  {
    mpix::GpuCallTimer t(GpuCall::copy);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  { mpix::GpuCallTimer t(GpuCall::pointer_query); }
  { mpix::GpuCallTimer t(GpuCall::pointer_query); }
  uint64_t ns = 0;
  CHECK(calls_of(false, GpuCall::copy, &ns) == 1);
  CHECK(ns >= 2000000);
  CHECK(calls_of(false, GpuCall::pointer_query) == 2);
  CHECK(calls_of(false, GpuCall::kernel_launch) == 0);
  // An mpix thread's calls are reported apart.
  std::thread([] {
    mpix::name_this_thread("mpix-test");
    mpix::GpuCallTimer t(GpuCall::kernel_launch);
  }).join();
  CHECK(calls_of(true, GpuCall::kernel_launch) == 1);
  CHECK(calls_of(false, GpuCall::kernel_launch) == 0);
  CHECK(calls_of(true, GpuCall::copy) == 0);
  // The report prints the sums and clears them.
  mpix::profile_note_enqueue_call();
  mpix::profile_report();
  CHECK(calls_of(false, GpuCall::copy) == 0);
  CHECK(calls_of(false, GpuCall::pointer_query) == 0);
  CHECK(calls_of(true, GpuCall::kernel_launch) == 0);
}

TEST_CASE("an enqueue call's parts are timed one after another, by kind", "[profile]") {
  REQUIRE(mpix::profile_enabled());
  using mpix::EnqueueKind;
  using mpix::EnqueuePart;
  mpix::profile_report();  // starts from zero
  auto part = [](EnqueueKind k, EnqueuePart p, uint64_t *ns = nullptr) {
    uint64_t n = 0, t = 0;
    mpix::profile_enqueue_parts(k, p, &n, &t);
    if (ns) *ns = t;
    return n;
  };
  for (int i = 0; i < 3; ++i) {
    mpix::EnqueueClock idle;  // never started: records nothing
    idle.mark(EnqueuePart::make);
    mpix::EnqueueClock c;
    c.start(EnqueueKind::recv);
    c.mark(EnqueuePart::make);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    c.mark(EnqueuePart::staging);  // the sleep is the staging part's, not make's
    c.mark(EnqueuePart::request);
    c.mark(EnqueuePart::submit);
    c.mark(EnqueuePart::trigger);
  }
  uint64_t make_ns = 0, staging_ns = 0;
  CHECK(part(EnqueueKind::recv, EnqueuePart::make, &make_ns) == 3);
  CHECK(part(EnqueueKind::recv, EnqueuePart::staging, &staging_ns) == 3);
  CHECK(staging_ns >= 3000000);
  CHECK(make_ns < staging_ns);
  CHECK(part(EnqueueKind::recv, EnqueuePart::trigger) == 3);
  CHECK(part(EnqueueKind::send, EnqueuePart::make) == 0);
  // The report prints the sums and clears them.
  mpix::profile_report();
  CHECK(part(EnqueueKind::recv, EnqueuePart::make) == 0);
  CHECK(part(EnqueueKind::recv, EnqueuePart::trigger) == 0);
}
