// Staged buffers on host streams: run with MPIX_STAGING_HOST=1, host buffers go through the
// bounce buffers as device buffers do on a GPU, so the staging paths run in CI.
// A receive larger than its message writes only the message's bytes, dense or strided, whether
// the stream or a host MPI_Wait completes it.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "test_util.hpp"

using namespace mpix_test;

namespace {

constexpr unsigned char kSentinel = 0xA5;

unsigned char pattern_byte(uint32_t seed, std::size_t i) {
  return static_cast<unsigned char>((i * 2654435761u) ^ (seed * 40503u) ^ (i >> 8));
}

std::vector<unsigned char> pattern(uint32_t seed, std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(seed, i);
  return v;
}

}  // namespace

TEST_CASE("a staged receive longer than its message keeps the bytes past the message",
          "[staging][short]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  const std::size_t cap = 300000;
  for (std::size_t m :
       {std::size_t{1}, std::size_t{4095}, std::size_t{4097}, std::size_t{100003}, cap - 1}) {
    for (bool host_wait : {false, true}) {
      INFO(m << "-byte message into a " << cap << "-byte receive, completed by "
             << (host_wait ? "MPI_Wait" : "the stream"));
      std::vector<unsigned char> out = pattern(static_cast<uint32_t>(rank + m), m);
      std::vector<unsigned char> in(cap, kSentinel);
      MPI_Request r[2];
      MPI_Status st[2];
      REQUIRE(MPIX_Irecv_enqueue(in.data(), static_cast<int>(cap), MPI_BYTE, peer, 3, s.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 3, s.comm,
                                 &r[1]) == MPI_SUCCESS);
      if (host_wait) {
        REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
      } else {
        REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
        s.sync();
      }
      int count = -1;
      MPI_Get_count(&st[0], MPI_BYTE, &count);
      CHECK(count == static_cast<int>(m));
      std::size_t bad = 0, clobbered = 0;
      for (std::size_t i = 0; i < m; ++i)
        bad += in[i] != pattern_byte(static_cast<uint32_t>(peer + m), i);
      for (std::size_t i = m; i < cap; ++i) clobbered += in[i] != kSentinel;
      CHECK(bad == 0);
      CHECK(clobbered == 0);
    }
  }
}

TEST_CASE("a strided staged receive of fewer elements than posted writes only those",
          "[staging][short][datatype]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  MPI_Datatype vec;
  MPI_Type_vector(64, 3, 8, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Aint lb = 0, ext = 0;
  MPI_Type_get_extent(vec, &lb, &ext);
  const int posted = 4, sent = 2;
  const std::size_t span = static_cast<std::size_t>(ext) * posted;
  // Which bytes of the span the first `sent` elements cover.
  std::vector<unsigned char> covered(span, 0);
  for (int e = 0; e < sent; ++e)
    for (int b = 0; b < 64; ++b)
      std::memset(&covered[static_cast<std::size_t>(e * ext + b * 8 * 4)], 1, 3 * 4);
  for (bool host_wait : {false, true}) {
    INFO("completed by " << (host_wait ? "MPI_Wait" : "the stream"));
    std::vector<unsigned char> out = pattern(static_cast<uint32_t>(50 + rank), span);
    std::vector<unsigned char> in(span, kSentinel);
    MPI_Request r[2];
    MPI_Status st[2];
    REQUIRE(MPIX_Irecv_enqueue(in.data(), posted, vec, peer, 4, s.comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.data(), sent, vec, peer, 4, s.comm, &r[1]) == MPI_SUCCESS);
    if (host_wait) {
      REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      s.sync();
    }
    int count = -1;
    MPI_Get_count(&st[0], vec, &count);
    CHECK(count == sent);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < span; ++i)
      bad += in[i] != (covered[i] ? pattern_byte(static_cast<uint32_t>(50 + peer), i) : kSentinel);
    CHECK(bad == 0);
  }
  MPI_Type_free(&vec);
}

// Receives of at most 1016 bytes: on a GPU stream (and with MPIX_HOST_FUSE=on here) their fused
// copy in takes the message from flagged words the agent writes last (TinyWords,
// gpu/backend.hpp). Many rounds through the same bounce buffers, so that a word a former receive
// flagged would show; shorter and empty messages; the blocking calls; a host wait.
TEST_CASE("tiny staged receives get their message, round after round", "[staging][tiny]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  for (std::size_t cap :
       {std::size_t{1}, std::size_t{8}, std::size_t{120}, std::size_t{1016}, std::size_t{1017}}) {
    for (std::size_t m : {cap, cap / 2, std::size_t{0}}) {
      INFO(m << "-byte messages into " << cap << "-byte receives");
      for (int round = 0; round < 40; ++round) {
        const int how = round % 3;  // 0: stream waits, 1: blocking calls, 2: MPI_Wait
        const uint32_t seed = static_cast<uint32_t>(round * 7 + cap);
        std::vector<unsigned char> out = pattern(seed + static_cast<uint32_t>(rank), m);
        std::vector<unsigned char> in(cap + 8, kSentinel);
        MPI_Status st{};
        if (how == 1) {
          // Even ranks send first: the blocking calls are each one stream operation.
          if (rank % 2 == 0)
            REQUIRE(MPIX_Send_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 5, s.comm) ==
                    MPI_SUCCESS);
          REQUIRE(MPIX_Recv_enqueue(in.data(), static_cast<int>(cap), MPI_BYTE, peer, 5, s.comm,
                                    &st) == MPI_SUCCESS);
          if (rank % 2 == 1)
            REQUIRE(MPIX_Send_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 5, s.comm) ==
                    MPI_SUCCESS);
          s.sync();
        } else {
          MPI_Request r[2];
          MPI_Status sts[2];
          REQUIRE(MPIX_Irecv_enqueue(in.data(), static_cast<int>(cap), MPI_BYTE, peer, 5, s.comm,
                                     &r[0]) == MPI_SUCCESS);
          REQUIRE(MPIX_Isend_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 5, s.comm,
                                     &r[1]) == MPI_SUCCESS);
          if (how == 2) {
            REQUIRE(MPI_Waitall(2, r, sts) == MPI_SUCCESS);
          } else {
            REQUIRE(MPIX_Waitall_enqueue(2, r, sts) == MPI_SUCCESS);
            s.sync();
          }
          st = sts[0];
        }
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == static_cast<int>(m));
        std::size_t bad = 0;
        for (std::size_t i = 0; i < m; ++i)
          bad += in[i] != pattern_byte(seed + static_cast<uint32_t>(peer), i);
        for (std::size_t i = m; i < in.size(); ++i) bad += in[i] != kSentinel;
        CHECK(bad == 0);
      }
    }
  }
}
