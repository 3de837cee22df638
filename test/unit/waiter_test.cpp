// Waiting primitives: the cyclic comparison of CU_STREAM_WAIT_VALUE_GEQ, the notifier that
// wakes sleepers, the spin -> yield -> sleep backoff, and the order of a stream's waits.
#include "base/waiter.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/wait_order.hpp"
#include "catch.hpp"

using mpix::reached;

TEST_CASE("reached() is the cyclic >= of CU_STREAM_WAIT_VALUE_GEQ", "[waiter]") {
  CHECK(reached(5, 5));
  CHECK(reached(6, 5));
  CHECK_FALSE(reached(4, 5));
  CHECK(reached(0, 0));
  // ~0 is "before" 1 cyclically (DESIGN.md §7): a word holding ~0 does not satisfy >= 1.
  CHECK_FALSE(reached(~uint64_t{0}, 1));
  CHECK(reached(1, ~uint64_t{0}));  // and 1 is after ~0: counters may wrap
  CHECK(reached(0, ~uint64_t{0}));
  const uint64_t half = uint64_t{1} << 63;
  CHECK(reached(half - 1, 0));    // the largest distance still "ahead"
  CHECK_FALSE(reached(half, 0));  // half-way round counts as behind
  CHECK(reached(half + 5, half + 4));
}

TEST_CASE("signal loads and stores", "[waiter]") {
  alignas(8) uint64_t w = 0;
  mpix::store_signal(&w, 42);
  CHECK(mpix::load_signal(&w) == 42);
}

TEST_CASE("the notifier wakes a sleeper at once, and a wait times out without it", "[waiter]") {
  auto &n = mpix::notifier();
  uint64_t seen = n.epoch();
  auto t0 = std::chrono::steady_clock::now();
  n.wait(seen, std::chrono::milliseconds(20));  // nobody notifies: times out
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(15));
  CHECK(n.epoch() == seen);

  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    n.wait(seen, std::chrono::seconds(30));
    woke.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  n.notify();
  sleeper.join();  // would take 30 s if the notify were lost
  CHECK(woke.load());
  CHECK(n.epoch() != seen);
  // A wait on an epoch already passed returns at once.
  n.wait(seen, std::chrono::seconds(30));
}

TEST_CASE("backoff escalates to sleeping and reset() starts over", "[waiter]") {
  mpix::Backoff b;
  CHECK_FALSE(b.sleeping());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!b.sleeping() && std::chrono::steady_clock::now() < deadline)
    b.pause(mpix::notifier().epoch());
  CHECK(b.sleeping());  // after MPIX_SPIN_US + MPIX_YIELD_US
  b.reset();
  CHECK_FALSE(b.sleeping());
}

TEST_CASE("a stream's wait order: the next wait is the first one not yet released",
          "[wait_order]") {
  uint64_t send = 0, recv = 0, other = 0;
  mpix::WaitOrder w;
  CHECK_FALSE(w.is_next(&recv, 1));  // not queued: never "next"
  w.note(&send, 1);                  // MPIX_Wait_enqueue on an Isend, then on an Irecv
  w.note(&recv, 1);
  CHECK(w.is_next(&send, 1));
  CHECK_FALSE(w.is_next(&recv, 1));  // the stream waits on the send first
  CHECK(w.pending() == 2);
  mpix::store_signal(&send, 1);  // the send completed: the receive's wait comes next
  CHECK(w.is_next(&recv, 1));
  CHECK_FALSE(w.is_next(&recv, 2));  // another wait on the same word is another wait
  // A later wait released out of order stays until those before it are released.
  w.note(&other, 3);
  mpix::store_signal(&other, 5);
  CHECK(w.pending() == 2);
  mpix::store_signal(&recv, 1);
  CHECK(w.pending() == 0);
  CHECK_FALSE(w.is_next(&other, 3));
}

TEST_CASE("a wait marked released counts as released before its word is written", "[wait_order]") {
  uint64_t send = 0, recv = 0;
  mpix::WaitOrder w;
  w.note(&send, 1);  // a GPU-direct send's wait, then a receive's
  w.note(&recv, 1);
  CHECK_FALSE(w.is_next(&recv, 1));
  w.mark_released(&send, 2);  // another wait on the word: no change
  CHECK_FALSE(w.is_next(&recv, 1));
  w.mark_released(&send, 1);  // its answer came in this agent loop: the word comes later
  CHECK(w.is_next(&recv, 1));
  CHECK(w.pending() == 1);
  w.mark_released(&recv, 7);  // not queued: nothing happens
  CHECK(w.pending() == 1);
}

TEST_CASE("a wait order keeps its order across its ring's wrap and growth", "[wait_order]") {
  // 64 waits fit the first ring; releasing some and queueing more wraps it, and more than it
  // holds makes it grow with the waits still in order.
  std::vector<uint64_t> words(300, 0);
  mpix::WaitOrder w;
  for (int i = 0; i < 60; ++i) w.note(&words[i], 1);
  for (int i = 0; i < 40; ++i) mpix::store_signal(&words[i], 1);
  CHECK(w.is_next(&words[40], 1));  // the first 40 released: drops them, the head moves on
  for (int i = 60; i < 100; ++i) w.note(&words[i], 1);   // wraps around the ring's end
  for (int i = 100; i < 300; ++i) w.note(&words[i], 1);  // grows twice, from a wrapped ring
  CHECK(w.pending() == 260);
  for (int i = 40; i < 299; ++i) {
    REQUIRE(w.is_next(&words[i], 1));
    REQUIRE_FALSE(w.is_next(&words[i + 1], 1));
    mpix::store_signal(&words[i], 1);
  }
  CHECK(w.is_next(&words[299], 1));
  w.mark_released(&words[299], 1);
  CHECK(w.pending() == 0);
}
