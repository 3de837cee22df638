// MPI matching through enqueued ops: wildcards, non-overtaking order for equal (source, tag),
// status fields through every path that returns one, and MPI_PROC_NULL.
#include <algorithm>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

TEST_CASE("ANY_SOURCE / ANY_TAG receives match every sender, status tells who", "[matching]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  if (rank == 0) {
    const int senders = size - 1;
    std::vector<std::vector<int>> bufs(senders, std::vector<int>(size + 1, -1));
    std::vector<MPI_Status> st(senders);
    for (int i = 0; i < senders; ++i)
      REQUIRE(MPIX_Recv_enqueue(bufs[i].data(), size + 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                s.comm, &st[i]) == MPI_SUCCESS);
    s.sync();
    std::vector<int> seen;
    for (int i = 0; i < senders; ++i) {
      const int src = st[i].MPI_SOURCE;
      REQUIRE(src >= 1);
      REQUIRE(src < size);
      seen.push_back(src);
      CHECK(st[i].MPI_TAG == 100 + src);
      int count = -1;
      REQUIRE(MPI_Get_count(&st[i], MPI_INT, &count) == MPI_SUCCESS);
      CHECK(count == src + 1);
      for (int k = 0; k < count; ++k) CHECK(bufs[i][k] == src * 10 + k);
      CHECK(bufs[i][count] == -1);  // nothing written past the message
    }
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i < senders; ++i) CHECK(seen[i] == i + 1);
  } else {
    std::vector<int> out(rank + 1);
    for (int k = 0; k <= rank; ++k) out[k] = rank * 10 + k;
    REQUIRE(MPIX_Send_enqueue(out.data(), rank + 1, MPI_INT, 0, 100 + rank, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("messages with equal (source, tag) are received in the order sent", "[matching]") {
  const int rank = world_rank();
  const int n = 300;
  // A communicator of ranks 0 and 1 only: the other ranks have no part in this test.
  MPI_Comm pair = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair) == MPI_SUCCESS);
  if (pair == MPI_COMM_NULL) return;
  {
    HostStreamComm s(pair);
    if (rank == 0) {
      std::vector<int> out(n);
      std::vector<MPI_Request> r(n);
      for (int i = 0; i < n; ++i) {
        out[i] = i;
        REQUIRE(MPIX_Isend_enqueue(&out[i], 1, MPI_INT, 1, 5, s.comm, &r[i]) == MPI_SUCCESS);
      }
      REQUIRE(MPIX_Waitall_enqueue(n, r.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      s.sync();
    } else {
      std::vector<int> in(n, -1);
      std::vector<MPI_Request> r(n);
      // Half with wildcards: wildcards must not change the order either.
      for (int i = 0; i < n; ++i)
        REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_INT, i % 2 ? MPI_ANY_SOURCE : 0,
                                   i % 3 ? MPI_ANY_TAG : 5, s.comm, &r[i]) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(n, r.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      s.sync();
      int out_of_order = 0;
      for (int i = 0; i < n; ++i) out_of_order += in[i] != i;
      CHECK(out_of_order == 0);
    }
  }
  CHECK(MPI_Comm_free(&pair) == MPI_SUCCESS);
}

TEST_CASE("a large message sent first is matched before a small one sent after it", "[matching]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1, big = 1 << 18;
  if (rank % 2 == 0) {
    std::vector<int> large(big, 1), small(4, 2);
    REQUIRE(MPIX_Send_enqueue(large.data(), big, MPI_INT, peer, 9, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(small.data(), 4, MPI_INT, peer, 9, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> a(big, 0), b(big, 0);
    MPI_Status sa, sb;
    REQUIRE(MPIX_Recv_enqueue(a.data(), big, MPI_INT, MPI_ANY_SOURCE, 9, s.comm, &sa) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(b.data(), big, MPI_INT, peer, MPI_ANY_TAG, s.comm, &sb) ==
            MPI_SUCCESS);
    s.sync();
    int ca = -1, cb = -1;
    MPI_Get_count(&sa, MPI_INT, &ca);
    MPI_Get_count(&sb, MPI_INT, &cb);
    CHECK(ca == big);
    CHECK(cb == 4);
    CHECK(a[big - 1] == 1);
    CHECK(b[0] == 2);
    CHECK(b[4] == 0);
  }
}

TEST_CASE("status fields through Recv_enqueue, Wait_enqueue and host MPI_Wait", "[status]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  if (rank % 2 == 0) {
    std::vector<int> out = {1, 2, 3, 4, 5, 6, 7};
    REQUIRE(MPIX_Send_enqueue(out.data(), 5, MPI_INT, peer, 11, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(out.data(), 3, MPI_INT, peer, 12, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(out.data(), 7, MPI_INT, peer, 13, s.comm) == MPI_SUCCESS);
    double d[2] = {0.5, 1.5};
    REQUIRE(MPIX_Send_enqueue(d, 2, MPI_DOUBLE, peer, 14, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> in(10, 0);
    MPI_Status st1, st2, st3;
    int count = -1;
    // 1. Blocking enqueued receive: status filled in stream order.
    st1.MPI_SOURCE = st1.MPI_TAG = -77;
    REQUIRE(MPIX_Recv_enqueue(in.data(), 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, s.comm, &st1) ==
            MPI_SUCCESS);
    s.sync();
    CHECK(st1.MPI_SOURCE == peer);
    CHECK(st1.MPI_TAG == 11);
    REQUIRE(MPI_Get_count(&st1, MPI_INT, &count) == MPI_SUCCESS);
    CHECK(count == 5);
    CHECK(in[4] == 5);
    // 2. Nonblocking receive completed by MPIX_Wait_enqueue.
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(in.data(), 10, MPI_INT, peer, MPI_ANY_TAG, s.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, &st2) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    s.sync();
    CHECK(st2.MPI_SOURCE == peer);
    CHECK(st2.MPI_TAG == 12);
    REQUIRE(MPI_Get_count(&st2, MPI_INT, &count) == MPI_SUCCESS);
    CHECK(count == 3);
    // 3. Nonblocking receive completed by a host MPI_Wait.
    REQUIRE(MPIX_Irecv_enqueue(in.data(), 10, MPI_INT, MPI_ANY_SOURCE, 13, s.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPI_Wait(&r, &st3) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK(st3.MPI_SOURCE == peer);
    CHECK(st3.MPI_TAG == 13);
    REQUIRE(MPI_Get_count(&st3, MPI_INT, &count) == MPI_SUCCESS);
    CHECK(count == 7);
    CHECK(in[6] == 7);
    // 4. Count in another datatype: 2 doubles are 4 ints' worth of bytes, and 2 doubles.
    double d[4] = {0, 0, 0, 0};
    MPI_Status st4;
    REQUIRE(MPIX_Recv_enqueue(d, 4, MPI_DOUBLE, peer, 14, s.comm, &st4) == MPI_SUCCESS);
    s.sync();
    REQUIRE(MPI_Get_count(&st4, MPI_DOUBLE, &count) == MPI_SUCCESS);
    CHECK(count == 2);
    CHECK(d[1] == 1.5);
  }
}

TEST_CASE("MPI_PROC_NULL: sends and receives complete at once with an empty status", "[matching]") {
  HostStreamComm s;
  int buf[3] = {7, 8, 9};
  MPI_Status st;
  st.MPI_SOURCE = st.MPI_TAG = -77;
  REQUIRE(MPIX_Send_enqueue(buf, 3, MPI_INT, MPI_PROC_NULL, 1, s.comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Recv_enqueue(buf, 3, MPI_INT, MPI_PROC_NULL, 1, s.comm, &st) == MPI_SUCCESS);
  s.sync();
  CHECK(buf[0] == 7);  // untouched
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  CHECK(st.MPI_TAG == MPI_ANY_TAG);
  int count = -1;
  REQUIRE(MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS);
  CHECK(count == 0);

  MPI_Request r[2];
  REQUIRE(MPIX_Isend_enqueue(buf, 3, MPI_INT, MPI_PROC_NULL, 2, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Irecv_enqueue(buf, 3, MPI_INT, MPI_PROC_NULL, 2, s.comm, &r[1]) == MPI_SUCCESS);
  MPI_Status sts[2];
  REQUIRE(MPIX_Waitall_enqueue(2, r, sts) == MPI_SUCCESS);
  s.sync();
  CHECK(sts[1].MPI_SOURCE == MPI_PROC_NULL);
  REQUIRE(MPI_Get_count(&sts[1], MPI_INT, &count) == MPI_SUCCESS);
  CHECK(count == 0);

  // And through a host MPI_Wait.
  REQUIRE(MPIX_Irecv_enqueue(buf, 3, MPI_INT, MPI_PROC_NULL, 3, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&r[0], &st) == MPI_SUCCESS);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  REQUIRE(MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS);
  CHECK(count == 0);
  CHECK(buf[2] == 9);
}
