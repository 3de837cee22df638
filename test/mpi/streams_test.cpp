// Several streams and stream communicators in one process, threads enqueuing at once, general
// streams, duplicated stream communicators, and enqueued allreduce.
#include <memory>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

TEST_CASE("several streams: messages stay on their communicator, no hidden dependency",
          "[streams]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm a, b, c;               // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  // Same peer and tag on three communicators: each receive gets its own communicator's data.
  int out[3] = {rank * 10 + 1, rank * 10 + 2, rank * 10 + 3}, in[3] = {-1, -1, -1};
  HostStreamComm *streams[3] = {&a, &b, &c};
  // Stream a is held by a gate; b and c must make progress regardless.
  Gate gate;
  gate.launch(a.hs);
  MPI_Request r[3][2];
  for (int i = 0; i < 3; ++i) {
    REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_INT, peer, 7, streams[i]->comm, &r[i][0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&out[i], 1, MPI_INT, peer, 7, streams[i]->comm, &r[i][1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r[i], MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
  b.sync();
  c.sync();
  CHECK(in[1] == peer * 10 + 2);
  CHECK(in[2] == peer * 10 + 3);
  CHECK(in[0] == -1);  // stream a has not reached its receive
  gate.release();
  a.sync();
  CHECK(in[0] == peer * 10 + 1);
}

TEST_CASE("threads enqueue on their own streams at the same time", "[streams][threads]") {
  const int rank = world_rank(), size = world_size();
  const int nthreads = 4, iters = 200;
  // Stream communicators are made collectively, in the same order on every rank.
  std::vector<std::unique_ptr<HostStreamComm>> sc;
  for (int t = 0; t < nthreads; ++t) sc.push_back(std::make_unique<HostStreamComm>());
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  std::vector<long> errors(nthreads, 0), rc_bad(nthreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      MPI_Comm comm = sc[t]->comm;
      std::vector<long> out(iters), in(iters, -1);
      std::vector<MPI_Request> reqs(2 * iters);
      for (int i = 0; i < iters; ++i) {
        out[i] = (static_cast<long>(t) * iters + i) * 64 + rank;
        rc_bad[t] += MPIX_Irecv_enqueue(&in[i], 1, MPI_LONG, prev, i, comm, &reqs[i]) != 0;
        rc_bad[t] += MPIX_Isend_enqueue(&out[i], 1, MPI_LONG, next, i, comm, &reqs[iters + i]) != 0;
        if (i % 50 == 49) {  // a blocking pair now and then, on the same stream
          long x = i, y = -1;
          rc_bad[t] += MPIX_Send_enqueue(&x, 1, MPI_LONG, next, 100000 + i, comm) != 0;
          rc_bad[t] +=
              MPIX_Recv_enqueue(&y, 1, MPI_LONG, prev, 100000 + i, comm, MPI_STATUS_IGNORE) != 0;
          rc_bad[t] += MPIX_Stream_synchronize(sc[t]->stream) != 0;
          errors[t] += y != i;
        }
      }
      rc_bad[t] += MPIX_Waitall_enqueue(2 * iters, reqs.data(), MPI_STATUSES_IGNORE) != 0;
      rc_bad[t] += MPIX_Stream_synchronize(sc[t]->stream) != 0;
      for (int i = 0; i < iters; ++i)
        errors[t] += in[i] != (static_cast<long>(t) * iters + i) * 64 + prev;
    });
  }
  for (auto &th : threads) th.join();
  for (int t = 0; t < nthreads; ++t) {
    CHECK(rc_bad[t] == 0);
    CHECK(errors[t] == 0);
  }
  sc.clear();  // collective frees, same order everywhere
}

TEST_CASE("general stream: ordinary MPI and enqueued ops on one communicator", "[streams]") {
  const int rank = world_rank(), size = world_size();
  MPIX_Stream gs = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Stream_create(MPI_INFO_NULL, &gs) == MPI_SUCCESS);
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, gs, &comm) == MPI_SUCCESS);
  MPIX_Stream got = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Comm_get_stream(comm, 0, &got) == MPI_SUCCESS);
  CHECK(got == gs);
  // Ordinary traffic.
  int sum = 0;
  REQUIRE(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == size * (size - 1) / 2);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int x = rank, y = -1;
  REQUIRE(MPI_Sendrecv(&x, 1, MPI_INT, next, 1, &y, 1, MPI_INT, prev, 1, comm, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
  CHECK(y == prev);
  // Enqueued ops run on the host stream mpix made for the general stream.
  std::vector<int> out(32), in(32, -1);
  for (int i = 0; i < 32; ++i) out[i] = rank * 100 + i;
  MPI_Request r;
  REQUIRE(MPIX_Irecv_enqueue(in.data(), 32, MPI_INT, prev, 2, comm, &r) == MPI_SUCCESS);
  REQUIRE(MPIX_Send_enqueue(out.data(), 32, MPI_INT, next, 2, comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(gs) == MPI_SUCCESS);
  for (int i = 0; i < 32; ++i) CHECK(in[i] == prev * 100 + i);
  // And ordinary traffic again, interleaved with an enqueued receive answered by MPI_Send.
  REQUIRE(MPIX_Recv_enqueue(&y, 1, MPI_INT, prev, 3, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Send(&x, 1, MPI_INT, next, 3, comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(gs) == MPI_SUCCESS);
  CHECK(y == prev);
  REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&gs) == MPI_SUCCESS);
  CHECK(gs == MPIX_STREAM_NULL);
}

TEST_CASE("MPI_Comm_dup / MPI_Comm_idup of a stream communicator keep the stream", "[streams]") {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPIX_Stream st = MPIX_STREAM_NULL;
  REQUIRE(make_host_mpix_stream(hs, &st) == MPI_SUCCESS);
  MPI_Comm comm, dup, idup;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, st, &comm) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_dup(comm, &dup) == MPI_SUCCESS);
  MPI_Request ireq;
  REQUIRE(MPI_Comm_idup(comm, &idup, &ireq) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&ireq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (MPI_Comm c : {comm, dup, idup}) {
    MPIX_Stream got = MPIX_STREAM_NULL;
    REQUIRE(MPIX_Comm_get_stream(c, 0, &got) == MPI_SUCCESS);
    CHECK(got == st);
  }
  // Enqueue on all three; the duplicates are separate matching contexts.
  int out[3] = {rank, rank + 100, rank + 200}, in[3] = {-1, -1, -1};
  MPI_Comm cs[3] = {comm, dup, idup};
  MPI_Request r[6];
  for (int i = 2; i >= 0; --i)  // receives posted in reverse order of the sends
    REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_INT, prev, 0, cs[i], &r[i]) == MPI_SUCCESS);
  for (int i = 0; i < 3; ++i)
    REQUIRE(MPIX_Isend_enqueue(&out[i], 1, MPI_INT, next, 0, cs[i], &r[3 + i]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(6, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(st) == MPI_SUCCESS);
  CHECK(in[0] == prev);
  CHECK(in[1] == prev + 100);
  CHECK(in[2] == prev + 200);
  // The stream is free only once every communicator using it is.
  REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&dup) == MPI_SUCCESS);
  CHECK(error_class(MPIX_Stream_free(&st)) == MPI_ERR_OTHER);
  CHECK(st != MPIX_STREAM_NULL);
  REQUIRE(MPI_Comm_free(&idup) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&st) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}

TEST_CASE("a stream communicator made with MPIX_STREAM_NULL is a plain duplicate", "[streams]") {
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &comm) == MPI_SUCCESS);
  MPIX_Stream got = reinterpret_cast<MPIX_Stream>(1);
  REQUIRE(MPIX_Comm_get_stream(comm, 0, &got) == MPI_SUCCESS);
  CHECK(got == MPIX_STREAM_NULL);
  int x = 1, sum = 0;
  REQUIRE(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == world_size());
  REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
  // A communicator mpix never saw has no stream either.
  REQUIRE(MPIX_Comm_get_stream(MPI_COMM_WORLD, 0, &got) == MPI_SUCCESS);
  CHECK(got == MPIX_STREAM_NULL);
}

TEST_CASE("MPIX_Allreduce_enqueue: sum, in place and not, in stream order", "[streams]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  const int n = 1000;
  std::vector<double> send(n), recv(n, -1), inplace(n);
  for (int i = 0; i < n; ++i) send[i] = rank + i;
  // The in-place buffer is filled by a host function on the stream, right before the reduce.
  struct Fill {
    double *buf;
    int n, rank;
    static void run(void *p) {
      auto *f = static_cast<Fill *>(p);
      for (int i = 0; i < f->n; ++i) f->buf[i] = 2.0 * f->rank + i;
    }
  } fill{inplace.data(), n, rank};
  Gate gate;
  gate.launch(s.hs);
  REQUIRE(mpix_host_stream_launch(s.hs, &Fill::run, &fill) == 0);
  REQUIRE(MPIX_Allreduce_enqueue(send.data(), recv.data(), n, MPI_DOUBLE, MPI_SUM, s.comm) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Allreduce_enqueue(MPI_IN_PLACE, inplace.data(), n, MPI_DOUBLE, MPI_SUM, s.comm) ==
          MPI_SUCCESS);
  int imax = -1;
  REQUIRE(MPIX_Allreduce_enqueue(&rank, &imax, 1, MPI_INT, MPI_MAX, s.comm) == MPI_SUCCESS);
  gate.release();
  s.sync();
  const double ranks = size * (size - 1) / 2.0;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    bad += recv[i] != ranks + static_cast<double>(size) * i;
    bad += inplace[i] != 2.0 * ranks + static_cast<double>(size) * i;
  }
  CHECK(bad == 0);
  CHECK(imax == size - 1);
}
