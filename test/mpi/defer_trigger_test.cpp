// Deferred triggers (info key mpix_defer_trigger): a nonblocking enqueued op's trigger is
// written with the stream's next mpix wait (or MPIX_Stream_synchronize, or a blocking enqueued
// op) instead of at once. Data, order and completion must be as without deferral, and the op
// really waits for that next call.
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// A host stream whose MPIX_Stream defers triggers, and its stream communicator. Collective.
struct DeferComm : HostStreamComm {
  DeferComm() : HostStreamComm(MPI_COMM_WORLD, "mpix_defer_trigger", "true") {}
};

}  // namespace

TEST_CASE("deferred triggers: ring exchanges with Isend/Irecv/Waitall_enqueue", "[defer]") {
  const int rank = world_rank(), size = world_size();
  DeferComm s;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  constexpr int kIters = 300, kN = 64;
  std::vector<std::vector<int>> out(kIters, std::vector<int>(kN)),
      in(kIters, std::vector<int>(kN, -1));
  std::vector<MPI_Status> st(2 * kIters);
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kN; ++i) out[it][i] = rank * 1000000 + it * 1000 + i;
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in[it].data(), kN, MPI_INT, left, it % 7, s.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out[it].data(), kN, MPI_INT, right, it % 7, s.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, &st[2 * it]) == MPI_SUCCESS);
    REQUIRE(r[0] == MPI_REQUEST_NULL);
  }
  s.sync();
  for (int it = 0; it < kIters; ++it) {
    REQUIRE(st[2 * it].MPI_SOURCE == left);
    REQUIRE(st[2 * it].MPI_TAG == it % 7);
    for (int i = 0; i < kN; ++i) REQUIRE(in[it][i] == left * 1000000 + it * 1000 + i);
  }
}

TEST_CASE("a deferred send waits for the stream's next mpix wait", "[defer]") {
  const int rank = world_rank(), size = world_size();
  DeferComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1, n = 32;
  std::vector<int> buf(n);
  for (int i = 0; i < n; ++i) buf[i] = 7 * i + rank;
  if (rank % 2 == 0) {
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(buf.data(), n, MPI_INT, peer, 3, s.comm, &r) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // A: the peer now looks for the message, for a while
    MPI_Barrier(MPI_COMM_WORLD);  // B: it found none
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
  } else {
    MPI_Barrier(MPI_COMM_WORLD);  // A
    int flag = 0;
    for (int k = 0; k < 100 && !flag; ++k) {
      MPI_Iprobe(peer, 3, s.comm, &flag, MPI_STATUS_IGNORE);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(flag == 0);             // the sender's stream has not reached a wait: nothing was sent
    MPI_Barrier(MPI_COMM_WORLD);  // B
    std::vector<int> got(n, -1);
    MPI_Status st;
    REQUIRE(MPI_Recv(got.data(), n, MPI_INT, peer, 3, s.comm, &st) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) REQUIRE(got[i] == 7 * i + peer);
  }
}

TEST_CASE("MPIX_Stream_synchronize writes a deferred trigger; host MPI_Wait completes", "[defer]") {
  const int rank = world_rank(), size = world_size();
  DeferComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1, n = 100;
  std::vector<double> buf(n);
  if (rank % 2 == 0) {
    for (int i = 0; i < n; ++i) buf[i] = 0.5 * i;
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(buf.data(), n, MPI_DOUBLE, peer, 4, s.comm, &r) == MPI_SUCCESS);
    s.sync();
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(MPI_Recv(buf.data(), n, MPI_DOUBLE, peer, 4, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) REQUIRE(buf[i] == 0.5 * i);
  }
}

// Without an mpix wait or MPIX_Stream_synchronize: the host wait writes the deferred trigger
// itself (api/host_wait_api.cpp), at the stream's end, so each host completion call completes.
TEST_CASE("host waits and tests alone write the deferred trigger", "[defer]") {
  const int rank = world_rank(), size = world_size();
  DeferComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1, n = 48;
  enum Completion { wait, waitall, waitany, waitsome, test, testall, testany, testsome, status };
  for (int how = wait; how <= status; ++how) {
    std::vector<int> out(n), in(n, -1);
    for (int i = 0; i < n; ++i) out[i] = 1000 * how + 10 * rank + i;
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in.data(), n, MPI_INT, peer, 20 + how, s.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.data(), n, MPI_INT, peer, 20 + how, s.comm, &r[1]) ==
            MPI_SUCCESS);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int done = 0, flag = 0, index = 0, outcount = 0, idx[2];
    while (done < 2 && std::chrono::steady_clock::now() < until) {
      switch (how) {
        case wait:
          REQUIRE(MPI_Wait(&r[done], MPI_STATUS_IGNORE) == MPI_SUCCESS);
          ++done;
          break;
        case waitall:
          REQUIRE(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
          done = 2;
          break;
        case waitany:
          REQUIRE(MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS);
          ++done;
          break;
        case waitsome:
          REQUIRE(MPI_Waitsome(2, r, &outcount, idx, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
          done += outcount;
          break;
        case test:
          REQUIRE(MPI_Test(&r[done], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
          done += flag;
          break;
        case testall:
          REQUIRE(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
          if (flag) done = 2;
          break;
        case testany:
          REQUIRE(MPI_Testany(2, r, &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
          if (flag && index != MPI_UNDEFINED) ++done;
          break;
        case testsome:
          REQUIRE(MPI_Testsome(2, r, &outcount, idx, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
          if (outcount != MPI_UNDEFINED) done += outcount;
          break;
        case status:
          // Does not free the request: freed by MPI_Wait once it says complete.
          REQUIRE(MPI_Request_get_status(r[done], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
          if (flag) REQUIRE(MPI_Wait(&r[done++], MPI_STATUS_IGNORE) == MPI_SUCCESS);
          break;
      }
    }
    INFO("completion call " << how);
    REQUIRE(done == 2);
    REQUIRE(r[0] == MPI_REQUEST_NULL);
    REQUIRE(r[1] == MPI_REQUEST_NULL);
    for (int i = 0; i < n; ++i) REQUIRE(in[i] == 1000 * how + 10 * peer + i);
  }
  s.sync();
}

TEST_CASE("a blocking Send_enqueue fires the deferred sends before it, in order", "[defer]") {
  const int rank = world_rank(), size = world_size();
  DeferComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  int a = 11, b = 22, c = 33;
  if (rank % 2 == 0) {
    MPI_Request r[2];
    REQUIRE(MPIX_Isend_enqueue(&a, 1, MPI_INT, peer, 5, s.comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&b, 1, MPI_INT, peer, 5, s.comm, &r[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&c, 1, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
    s.sync();  // Send_enqueue's trigger covered the two before it: all three went
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    s.sync();
  } else {
    int got[3] = {0, 0, 0};
    for (int &g : got)
      REQUIRE(MPI_Recv(&g, 1, MPI_INT, peer, 5, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(got[0] == 11);
    REQUIRE(got[1] == 22);
    REQUIRE(got[2] == 33);
  }
}

TEST_CASE("mpix_defer_trigger takes true or false only", "[defer][errors]") {
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPIX_Stream st = MPIX_STREAM_NULL;
  const int rc = make_host_mpix_stream(hs, &st, "mpix_defer_trigger", "sometimes");
  CHECK(error_class(rc) == MPI_ERR_ARG);
  CHECK(st == MPIX_STREAM_NULL);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}
