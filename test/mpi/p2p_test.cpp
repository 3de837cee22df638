// Enqueued point-to-point traffic patterns: a ring over every rank, messages past Open MPI's
// eager limit, and a long run of enqueued ops (>= 10,000 per rank) checked message by message.
#include <numeric>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

TEST_CASE("ring: each rank passes a token to the next, in stream order", "[p2p]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const int n = 64;
  std::vector<int> out(n), in(n, -1);
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < n; ++i) out[i] = round * 100000 + rank * 1000 + i;
    MPI_Request reqs[2];
    REQUIRE(MPIX_Irecv_enqueue(in.data(), n, MPI_INT, prev, round, s.comm, &reqs[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.data(), n, MPI_INT, next, round, s.comm, &reqs[1]) ==
            MPI_SUCCESS);
    MPI_Status st[2];
    REQUIRE(MPIX_Waitall_enqueue(2, reqs, st) == MPI_SUCCESS);
    CHECK(reqs[0] == MPI_REQUEST_NULL);
    CHECK(reqs[1] == MPI_REQUEST_NULL);
    s.sync();
    for (int i = 0; i < n; ++i) REQUIRE(in[i] == round * 100000 + prev * 1000 + i);
    CHECK(st[0].MPI_SOURCE == prev);
    CHECK(st[0].MPI_TAG == round);
  }
}

TEST_CASE("ring with blocking enqueue calls (even ranks send first)", "[p2p]") {
  const int rank = world_rank(), size = world_size();
  if (size % 2) return;  // the send-first/receive-first split needs an even ring
  HostStreamComm s;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int token = rank, got = -1;
  if (rank % 2 == 0) {
    REQUIRE(MPIX_Send_enqueue(&token, 1, MPI_INT, next, 3, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(&got, 1, MPI_INT, prev, 3, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Recv_enqueue(&got, 1, MPI_INT, prev, 3, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&token, 1, MPI_INT, next, 3, s.comm) == MPI_SUCCESS);
  }
  s.sync();
  CHECK(got == prev);
}

TEST_CASE("large messages (rendezvous protocol) arrive intact", "[p2p]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // pairs (0,1), (2,3), ...; odd rank out, if any
  const int peer = rank ^ 1;
  const int n = 1 << 20;  // 4 MiB of ints: far above any eager limit
  std::vector<int> out(n), in(n, -1);
  for (int i = 0; i < n; ++i) out[i] = i * 7 + rank;
  MPI_Request r[2];
  REQUIRE(MPIX_Irecv_enqueue(in.data(), n, MPI_INT, peer, 1, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(out.data(), n, MPI_INT, peer, 1, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  s.sync();
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += in[i] != i * 7 + peer;
  CHECK(bad == 0);
}

TEST_CASE("10,000 enqueued ops per rank, every message checked", "[p2p][stress]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  // Each rank sends to the next rank of the ring and receives from the previous one; tags tell
  // the 100 messages of a batch apart.
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const int batch = 100, batches = 50;  // 50 x (100 sends + 100 receives) = 10,000 ops
  std::vector<long> out(batch), in(batch);
  std::vector<MPI_Request> reqs(2 * batch);
  long errors = 0;
  for (int b = 0; b < batches; ++b) {
    std::fill(in.begin(), in.end(), -1);
    for (int i = 0; i < batch; ++i) {
      out[i] = (static_cast<long>(b) * batch + i) * 16 + rank;
      REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_LONG, prev, i, s.comm, &reqs[i]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(&out[i], 1, MPI_LONG, next, i, s.comm, &reqs[batch + i]) ==
              MPI_SUCCESS);
    }
    REQUIRE(MPIX_Waitall_enqueue(2 * batch, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    s.sync();
    for (int i = 0; i < batch; ++i)
      errors += in[i] != (static_cast<long>(b) * batch + i) * 16 + prev;
  }
  CHECK(errors == 0);
}
