// Interoperation with plain MPI: enqueued sends received by MPI_Recv and the reverse, enqueue
// requests completed on the host with MPI_Wait / MPI_Test, and MPIX_Waitall_enqueue with
// MPI_REQUEST_NULL entries.
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

TEST_CASE("enqueued send -> plain MPI_Recv, plain MPI_Send -> enqueued receive", "[interop]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1, n = 100;
  std::vector<int> out(n), in(n, -1);
  for (int i = 0; i < n; ++i) out[i] = rank * 1000 + i;
  if (rank % 2 == 0) {
    REQUIRE(MPIX_Send_enqueue(out.data(), n, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
    MPI_Status st;
    REQUIRE(MPI_Recv(in.data(), n, MPI_INT, peer, 2, s.comm, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == peer);
    s.sync();
  } else {
    MPI_Status st;
    REQUIRE(MPI_Recv(in.data(), n, MPI_INT, peer, 1, s.comm, &st) == MPI_SUCCESS);
    CHECK(st.MPI_TAG == 1);
    for (int i = 0; i < n; ++i) REQUIRE(in[i] == peer * 1000 + i);
    std::vector<int> in2(n, -1);
    REQUIRE(MPIX_Recv_enqueue(in2.data(), n, MPI_INT, peer, 3, s.comm, &st) == MPI_SUCCESS);
    REQUIRE(MPI_Send(out.data(), n, MPI_INT, peer, 2, s.comm) == MPI_SUCCESS);
    s.sync();
    for (int i = 0; i < n; ++i) REQUIRE(in2[i] == peer * 1000 + 500 + i);
    CHECK(st.MPI_TAG == 3);
    return;
  }
  for (int i = 0; i < n; ++i) REQUIRE(in[i] == peer * 1000 + i);
  for (int i = 0; i < n; ++i) out[i] = rank * 1000 + 500 + i;
  REQUIRE(MPI_Send(out.data(), n, MPI_INT, peer, 3, s.comm) == MPI_SUCCESS);
}

TEST_CASE("an MPIX_Isend_enqueue request completes with host MPI_Wait and MPI_Test", "[interop]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  int x = rank + 40, y = -1, z = -1;
  if (rank % 2 == 0) {
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 1, s.comm, &r) == MPI_SUCCESS);
    MPI_Status st;
    REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 2, s.comm, &r) == MPI_SUCCESS);
    int flag = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!flag && std::chrono::steady_clock::now() < deadline)
      REQUIRE(MPI_Test(&r, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(r == MPI_REQUEST_NULL);
  } else {
    REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, 1, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    // The receiver's side: an enqueued receive whose request is tested on the host.
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(&z, 1, MPI_INT, peer, 2, s.comm, &r) == MPI_SUCCESS);
    int flag = 0;
    MPI_Status st;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!flag && std::chrono::steady_clock::now() < deadline)
      REQUIRE(MPI_Test(&r, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(st.MPI_SOURCE == peer);
    CHECK(st.MPI_TAG == 2);
    CHECK(y == peer + 40);
    CHECK(z == peer + 40);
  }
  s.sync();
}

TEST_CASE("host MPI_Waitall over enqueue requests mixed with plain MPI requests", "[interop]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  int a = rank, b = rank + 10, ga = -1, gb = -1;
  MPI_Request r[4];
  REQUIRE(MPIX_Irecv_enqueue(&ga, 1, MPI_INT, peer, 1, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPI_Irecv(&gb, 1, MPI_INT, peer, 2, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(&a, 1, MPI_INT, peer, 1, s.comm, &r[2]) == MPI_SUCCESS);
  REQUIRE(MPI_Isend(&b, 1, MPI_INT, peer, 2, s.comm, &r[3]) == MPI_SUCCESS);
  MPI_Status st[4];
  REQUIRE(MPI_Waitall(4, r, st) == MPI_SUCCESS);
  CHECK(ga == peer);
  CHECK(gb == peer + 10);
  CHECK(st[0].MPI_TAG == 1);
  CHECK(st[0].MPI_SOURCE == peer);
  s.sync();
}

TEST_CASE("MPIX_Waitall_enqueue accepts MPI_REQUEST_NULL entries", "[interop]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  int a = rank * 3, ga = -1;
  MPI_Request r[5] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                      MPI_REQUEST_NULL};
  REQUIRE(MPIX_Irecv_enqueue(&ga, 1, MPI_INT, peer, 4, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(&a, 1, MPI_INT, peer, 4, s.comm, &r[3]) == MPI_SUCCESS);
  MPI_Status st[5];
  for (auto &x : st) x.MPI_SOURCE = x.MPI_TAG = -77;
  REQUIRE(MPIX_Waitall_enqueue(5, r, st) == MPI_SUCCESS);
  for (auto &x : r) CHECK(x == MPI_REQUEST_NULL);
  s.sync();
  CHECK(ga == peer * 3);
  CHECK(st[1].MPI_SOURCE == peer);
  CHECK(st[1].MPI_TAG == 4);
  // Null entries get the empty status (MPI-4 3.7.3).
  CHECK(st[0].MPI_SOURCE == MPI_ANY_SOURCE);
  CHECK(st[0].MPI_TAG == MPI_ANY_TAG);
  int count = -1;
  REQUIRE(MPI_Get_count(&st[2], MPI_INT, &count) == MPI_SUCCESS);
  CHECK(count == 0);
  // All null, and count 0, are no-ops.
  REQUIRE(MPIX_Waitall_enqueue(5, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(0, nullptr, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  MPI_Request null = MPI_REQUEST_NULL;
  REQUIRE(MPIX_Wait_enqueue(&null, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}
