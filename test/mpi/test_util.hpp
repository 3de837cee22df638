// Helpers shared by the multi-rank tests: a host stream wrapped in an MPIX_Stream with its
// stream communicator, host functions that hold a stream until released or record a buffer,
// and rank queries. Everything here drives the public C API only.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace mpix_test {

inline int world_rank() {
  int r = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The MPI error class of a return code (what the tests compare against).
inline int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

// An MPIX_Stream made from an info object naming a host stream, plus one optional extra info
// key (e.g. "mpix_defer_trigger").
inline int make_host_mpix_stream(mpix_host_stream_t hs, MPIX_Stream *out, const char *key = nullptr,
                                 const char *value = nullptr) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  if (key) MPI_Info_set(info, key, value);
  int rc = MPIX_Info_set_hex(info, "value", &hs, sizeof hs);
  if (rc == MPI_SUCCESS) rc = MPIX_Stream_create(info, out);
  MPI_Info_free(&info);
  return rc;
}

// A host stream, its MPIX_Stream and a stream communicator over @p parent. Collective over
// @p parent (construction and destruction). The destructor drains the stream and frees all
// three, checking each step succeeds.
class HostStreamComm {
 public:
  explicit HostStreamComm(MPI_Comm parent = MPI_COMM_WORLD, const char *key = nullptr,
                          const char *value = nullptr) {
    REQUIRE(mpix_host_stream_create(&hs) == 0);
    REQUIRE(make_host_mpix_stream(hs, &stream, key, value) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_comm_create(parent, stream, &comm) == MPI_SUCCESS);
  }
  ~HostStreamComm() {
    if (stream != MPIX_STREAM_NULL) CHECK(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
    if (comm != MPI_COMM_NULL) CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
    if (stream != MPIX_STREAM_NULL) CHECK(MPIX_Stream_free(&stream) == MPI_SUCCESS);
    if (hs) CHECK(mpix_host_stream_destroy(&hs) == 0);
  }
  HostStreamComm(const HostStreamComm &) = delete;
  HostStreamComm &operator=(const HostStreamComm &) = delete;

  void sync() { REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS); }

  mpix_host_stream_t hs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
};

// A host function that holds its stream until release(): later work on the stream cannot run
// while it is closed. Bounded, so a broken test fails instead of hanging.
class Gate {
 public:
  Gate() = default;
  Gate(const Gate &) = delete;
  Gate &operator=(const Gate &) = delete;
  // A test that failed with the gate closed must not leave the stream running into a dead
  // object: open it and wait (bounded) until the stream is past it.
  ~Gate() {
    release();
    if (!launched_) return;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!left_.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  static void block(void *p) {
    auto *g = static_cast<Gate *>(p);
    g->entered_.store(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!g->open_.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    g->timed_out_.store(!g->open_.load());
    g->left_.store(true);
  }
  void launch(mpix_host_stream_t hs) {
    REQUIRE(mpix_host_stream_launch(hs, &Gate::block, this) == 0);
    launched_ = true;
  }
  void release() { open_.store(true); }
  // Waits until the stream has reached the gate (so everything before it has run).
  bool wait_entered() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!entered_.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    return entered_.load();
  }
  bool timed_out() const { return timed_out_.load(); }

 private:
  std::atomic<bool> open_{false}, entered_{false}, left_{false}, timed_out_{false};
  bool launched_ = false;
};

// A host function that copies @p n ints at @p src when the stream runs it.
struct Snapshot {
  const int *src = nullptr;
  std::size_t n = 0;
  std::vector<int> seen;
  std::atomic<bool> taken{false};

  static void take(void *p) {
    auto *s = static_cast<Snapshot *>(p);
    s->seen.assign(s->src, s->src + s->n);
    s->taken.store(true);
  }
  void launch(mpix_host_stream_t hs, const int *buf, std::size_t count) {
    src = buf;
    n = count;
    REQUIRE(mpix_host_stream_launch(hs, &Snapshot::take, this) == 0);
  }
};

}  // namespace mpix_test
