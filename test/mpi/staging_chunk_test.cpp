// Chunked staged messages (MPIX_STAGING_CHUNK, providers/mpi/mpi_chunk.hpp) on host streams:
// run with MPIX_STAGING_HOST=1 (host buffers staged like device ones) and MPIX_STAGING_CHUNK
// set. Sizes around the chunk size arrive intact; wildcard receives match chunked and plain
// messages in MPI's order; several chunked messages in flight between one pair; receives longer
// than the message keep the bytes past it; too-short ones report MPI_ERR_TRUNCATE; ranks that
// disagree on the chunk size cannot make a stream communicator.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "test_util.hpp"

using namespace mpix_test;

namespace {

constexpr unsigned char kSentinel = 0x5A;

long chunk_setting() {
  const char *c = std::getenv("MPIX_STAGING_CHUNK");
  return c && *c ? std::atol(c) : 0;
}

unsigned char pattern_byte(uint32_t seed, std::size_t i) {
  return static_cast<unsigned char>((i * 2654435761u) ^ (seed * 40503u) ^ (i >> 8));
}

std::vector<unsigned char> pattern(uint32_t seed, std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(seed, i);
  return v;
}

std::size_t wrong(const std::vector<unsigned char> &got, std::size_t n, uint32_t seed) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += got[i] != pattern_byte(seed, i);
  return bad;
}

std::size_t clobbered(const std::vector<unsigned char> &got, std::size_t from) {
  std::size_t bad = 0;
  for (std::size_t i = from; i < got.size(); ++i) bad += got[i] != kSentinel;
  return bad;
}

int count_of(MPI_Status &st) {
  int n = -1;
  MPI_Get_count(&st, MPI_BYTE, &n);
  return n;
}

}  // namespace

TEST_CASE("every rank must use the same MPIX_STAGING_CHUNK", "[chunk][setting]") {
  long mine = chunk_setting(), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPIX_Stream stream = MPIX_STREAM_NULL;
  REQUIRE(make_host_mpix_stream(hs, &stream) == MPI_SUCCESS);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm);
  if (lo != hi) {
    INFO("MPIX_STAGING_CHUNK between " << lo << " and " << hi << " across the ranks");
    CHECK(error_class(rc) == MPI_ERR_ARG);
    CHECK(comm == MPI_COMM_NULL);
  } else {
    CHECK(rc == MPI_SUCCESS);
    if (comm != MPI_COMM_NULL) CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
  }
  CHECK(MPIX_Stream_free(&stream) == MPI_SUCCESS);
  CHECK(mpix_host_stream_destroy(&hs) == 0);
}

TEST_CASE("messages around the chunk size arrive intact", "[chunk][sizes]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  const std::size_t C = static_cast<std::size_t>(c);
  for (std::size_t m :
       {std::size_t{1}, C - 1, C, C + 1, C + 32, 2 * C, 2 * C + 7, 7 * C, 40 * C + 123}) {
    for (std::size_t extra : {std::size_t{0}, C / 2 + 3}) {
      INFO(m << "-byte message, chunk " << C << ", receive " << m + extra << " bytes");
      const uint32_t seed = static_cast<uint32_t>(m * 3 + extra);
      std::vector<unsigned char> out = pattern(seed + static_cast<uint32_t>(rank), m);
      std::vector<unsigned char> in(m + extra, kSentinel);
      MPI_Request r[2];
      MPI_Status st[2];
      REQUIRE(MPIX_Irecv_enqueue(in.data(), static_cast<int>(in.size()), MPI_BYTE, peer, 5, s.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 5, s.comm,
                                 &r[1]) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      s.sync();
      CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
      CHECK(st[0].MPI_SOURCE == peer);
      CHECK(st[0].MPI_TAG == 5);
      CHECK(count_of(st[0]) == static_cast<int>(m));
      CHECK(wrong(in, m, seed + static_cast<uint32_t>(peer)) == 0);
      CHECK(clobbered(in, m) == 0);
    }
  }
}

TEST_CASE("a message of exactly chunk + 32 bytes that is not chunked is a plain message",
          "[chunk][sizes]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  // A derived datatype is never chunked: the wire carries chunk + 32 bytes in one message, the
  // size of a first piece. Received into a plain byte buffer and into a strided one.
  const int m = static_cast<int>(c) + 32;
  MPI_Datatype blob, strided;
  MPI_Type_contiguous(m, MPI_BYTE, &blob);
  MPI_Type_commit(&blob);
  MPI_Type_vector(m, 1, 2, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  std::vector<unsigned char> out = pattern(static_cast<uint32_t>(9 + rank), m);
  std::vector<unsigned char> in(m + 100, kSentinel), in2(2 * m, kSentinel);
  MPI_Request r[4];
  MPI_Status st[4];
  REQUIRE(MPIX_Irecv_enqueue(in.data(), m + 100, MPI_BYTE, peer, 6, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Irecv_enqueue(in2.data(), 1, strided, peer, 7, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(out.data(), 1, blob, peer, 6, s.comm, &r[2]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(out.data(), 1, blob, peer, 7, s.comm, &r[3]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(4, r, st) == MPI_SUCCESS);
  s.sync();
  CHECK(count_of(st[0]) == m);
  CHECK(wrong(in, m, 9 + peer) == 0);
  CHECK(clobbered(in, m) == 0);
  std::size_t bad = 0;
  for (int i = 0; i < m; ++i)
    bad += in2[2 * i] != pattern_byte(9 + peer, i) || in2[2 * i + 1] != kSentinel;
  CHECK(bad == 0);
  MPI_Type_free(&blob);
  MPI_Type_free(&strided);
}

TEST_CASE("wildcard receives match chunked and plain messages in MPI's order",
          "[chunk][matching]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  const std::size_t C = static_cast<std::size_t>(c);
  // The sender's sequence: sizes alternate chunked / plain, tags 1, 2, 1, 3, ...
  const std::vector<std::size_t> sizes = {3 * C + 5, 10, 5 * C, C, 2 * C + 1, 77, 4 * C, 1};
  const std::vector<int> tags = {1, 2, 1, 3, 1, 2, 3, 1};
  const std::size_t cap = 6 * C;
  if (rank % 2 == 0) {
    std::vector<std::vector<unsigned char>> out;
    std::vector<MPI_Request> r(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      out.push_back(pattern(static_cast<uint32_t>(100 + k), sizes[k]));
      REQUIRE(MPIX_Isend_enqueue(out[k].data(), static_cast<int>(sizes[k]), MPI_BYTE, peer, tags[k],
                                 s.comm, &r[k]) == MPI_SUCCESS);
    }
    REQUIRE(MPIX_Waitall_enqueue(static_cast<int>(r.size()), r.data(), MPI_STATUSES_IGNORE) ==
            MPI_SUCCESS);
    s.sync();
  } else {
    // First a receive for tag 3 only, then ANY_TAG ones, then one for tag 2 from ANY_SOURCE:
    // MPI gives the tag-3 receive the first tag-3 message (index 3) and the ANY_TAG receives
    // the others in send order.
    std::vector<std::vector<unsigned char>> in(sizes.size(),
                                               std::vector<unsigned char>(cap, kSentinel));
    std::vector<MPI_Request> r(sizes.size());
    std::vector<MPI_Status> st(sizes.size());
    REQUIRE(MPIX_Irecv_enqueue(in[0].data(), static_cast<int>(cap), MPI_BYTE, peer, 3, s.comm,
                               &r[0]) == MPI_SUCCESS);
    for (std::size_t k = 1; k + 1 < sizes.size(); ++k)
      REQUIRE(MPIX_Irecv_enqueue(in[k].data(), static_cast<int>(cap), MPI_BYTE, peer, MPI_ANY_TAG,
                                 s.comm, &r[k]) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(in.back().data(), static_cast<int>(cap), MPI_BYTE, MPI_ANY_SOURCE,
                               MPI_ANY_TAG, s.comm, &r.back()) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(static_cast<int>(r.size()), r.data(), st.data()) == MPI_SUCCESS);
    s.sync();
    // Receive k gets message expect[k].
    const std::vector<std::size_t> expect = {3, 0, 1, 2, 4, 5, 6, 7};
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t msg = expect[k];
      INFO("receive " << k << " should get message " << msg);
      CHECK(st[k].MPI_TAG == tags[msg]);
      CHECK(st[k].MPI_SOURCE == peer);
      CHECK(count_of(st[k]) == static_cast<int>(sizes[msg]));
      CHECK(wrong(in[k], sizes[msg], static_cast<uint32_t>(100 + msg)) == 0);
      CHECK(clobbered(in[k], sizes[msg]) == 0);
    }
  }
}

TEST_CASE("ANY_SOURCE receives take chunked messages from every sender in per-sender order",
          "[chunk][matching]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  HostStreamComm s;
  const std::size_t C = static_cast<std::size_t>(c);
  const int per = 4;
  auto size_of = [&](int k) { return k % 2 ? 3 * C + 11 * static_cast<std::size_t>(k) : 50u; };
  if (rank != 0) {
    std::vector<std::vector<unsigned char>> out;
    std::vector<MPI_Request> r(per);
    for (int k = 0; k < per; ++k) {
      out.push_back(pattern(static_cast<uint32_t>(1000 * rank + k), size_of(k)));
      REQUIRE(MPIX_Isend_enqueue(out[k].data(), static_cast<int>(size_of(k)), MPI_BYTE, 0, k,
                                 s.comm, &r[k]) == MPI_SUCCESS);
    }
    REQUIRE(MPIX_Waitall_enqueue(per, r.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    s.sync();
  } else {
    const int total = per * (size - 1);
    const std::size_t cap = 4 * C;
    std::vector<std::vector<unsigned char>> in(total, std::vector<unsigned char>(cap, kSentinel));
    std::vector<MPI_Request> r(total);
    std::vector<MPI_Status> st(total);
    for (int k = 0; k < total; ++k)
      REQUIRE(MPIX_Irecv_enqueue(in[k].data(), static_cast<int>(cap), MPI_BYTE, MPI_ANY_SOURCE,
                                 MPI_ANY_TAG, s.comm, &r[k]) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(total, r.data(), st.data()) == MPI_SUCCESS);
    s.sync();
    std::vector<int> next(size, 0);
    for (int k = 0; k < total; ++k) {
      const int src = st[k].MPI_SOURCE;
      REQUIRE(src >= 1);
      REQUIRE(src < size);
      // Non-overtaking: each sender's messages arrive in the order it sent them.
      CHECK(st[k].MPI_TAG == next[src]);
      const int msg = st[k].MPI_TAG;
      CHECK(count_of(st[k]) == static_cast<int>(size_of(msg)));
      CHECK(wrong(in[k], size_of(msg), static_cast<uint32_t>(1000 * src + msg)) == 0);
      ++next[src];
    }
    for (int p = 1; p < size; ++p) CHECK(next[p] == per);
  }
}

TEST_CASE("many chunked messages in flight between one pair", "[chunk][flight]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  const std::size_t m = 9 * static_cast<std::size_t>(c) + 3;
  const int n = 12;
  std::vector<std::vector<unsigned char>> out, in(n, std::vector<unsigned char>(m, kSentinel));
  std::vector<MPI_Request> r(2 * n);
  for (int k = 0; k < n; ++k) {
    out.push_back(pattern(static_cast<uint32_t>(rank * 100 + k), m));
    REQUIRE(MPIX_Irecv_enqueue(in[k].data(), static_cast<int>(m), MPI_BYTE, peer, 8, s.comm,
                               &r[k]) == MPI_SUCCESS);
  }
  for (int k = 0; k < n; ++k)
    REQUIRE(MPIX_Isend_enqueue(out[k].data(), static_cast<int>(m), MPI_BYTE, peer, 8, s.comm,
                               &r[n + k]) == MPI_SUCCESS);
  // Completed on the host this time.
  REQUIRE(MPI_Waitall(2 * n, r.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  for (int k = 0; k < n; ++k) {
    INFO("message " << k);
    CHECK(wrong(in[k], m, static_cast<uint32_t>(peer * 100 + k)) == 0);
  }
}

TEST_CASE("a receive too short for a chunked or plain message reports MPI_ERR_TRUNCATE",
          "[chunk][truncate]") {
  const int rank = world_rank(), size = world_size();
  const long c = chunk_setting();
  REQUIRE(c > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  HostStreamComm s;
  const std::size_t C = static_cast<std::size_t>(c);
  for (std::size_t m : {5 * C + 1, C + 32, C - 1}) {
    INFO(m << "-byte message into a " << m / 2 << "-byte receive");
    std::vector<unsigned char> out = pattern(static_cast<uint32_t>(m), m);
    std::vector<unsigned char> in(m / 2, kSentinel);
    MPI_Status st;
    if (rank % 2 == 0) {
      REQUIRE(MPIX_Send_enqueue(out.data(), static_cast<int>(m), MPI_BYTE, peer, 9, s.comm) ==
              MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(in.data(), static_cast<int>(in.size()), MPI_BYTE, peer, 9, s.comm,
                                &st) == MPI_SUCCESS);
    }
    s.sync();
    if (rank % 2) CHECK(error_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE);
    // The pair still talks: the next message is intact.
    std::vector<unsigned char> next_out = pattern(7, 2 * C + 1), next_in(2 * C + 1, kSentinel);
    if (rank % 2 == 0) {
      REQUIRE(MPIX_Send_enqueue(next_out.data(), static_cast<int>(next_out.size()), MPI_BYTE, peer,
                                9, s.comm) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(next_in.data(), static_cast<int>(next_in.size()), MPI_BYTE, peer, 9,
                                s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    s.sync();
    if (rank % 2) CHECK(wrong(next_in, next_in.size(), 7) == 0);
  }
}
