// The enqueue path's shortcuts keep their answers right: the per-thread cache of the last
// stream communicator (a freed communicator's handle may come back for a new one), the request
// table (Waitall with a bad or repeated handle consumes nothing), the table of named datatypes
// (a derived type is still held after the user frees it), and threads switching between
// communicators while others enqueue.
#include <memory>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// One exchange with the ring neighbours on @p comm; true if the data arrived.
bool ring_exchange(MPI_Comm comm, MPIX_Stream stream, long value) {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  long out = value * 100 + rank, in = -1;
  MPI_Request r[2];
  if (MPIX_Irecv_enqueue(&in, 1, MPI_LONG, prev, 5, comm, &r[0]) != MPI_SUCCESS) return false;
  if (MPIX_Isend_enqueue(&out, 1, MPI_LONG, next, 5, comm, &r[1]) != MPI_SUCCESS) return false;
  if (MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return false;
  if (MPIX_Stream_synchronize(stream) != MPI_SUCCESS) return false;
  return in == value * 100 + prev;
}

}  // namespace

TEST_CASE("a stream communicator freed and made again runs on its new stream", "[fastpath]") {
  for (int round = 0; round < 8; ++round) {
    // The new communicator often gets the freed one's handle; its ops must go to the new stream
    // (synchronizing that stream shows the data), and the old stream must be free of it.
    HostStreamComm sc;
    REQUIRE(ring_exchange(sc.comm, sc.stream, round));
    MPIX_Stream got = MPIX_STREAM_NULL;
    REQUIRE(MPIX_Comm_get_stream(sc.comm, 0, &got) == MPI_SUCCESS);
    CHECK(got == sc.stream);
  }
}

TEST_CASE("two communicators used alternately by one thread", "[fastpath]") {
  HostStreamComm a, b;
  for (int i = 0; i < 20; ++i) {
    HostStreamComm &sc = i % 2 ? b : a;
    REQUIRE(ring_exchange(sc.comm, sc.stream, i));
  }
}

TEST_CASE("Waitall_enqueue with a repeated or foreign handle consumes nothing", "[fastpath]") {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  HostStreamComm sc;
  long out = rank, in = -1;
  MPI_Request r[3];
  REQUIRE(MPIX_Irecv_enqueue(&in, 1, MPI_LONG, prev, 9, sc.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(&out, 1, MPI_LONG, next, 9, sc.comm, &r[1]) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  r[2] = r[0];  // listed twice
  int rc = MPIX_Waitall_enqueue(3, r, MPI_STATUSES_IGNORE);
  CHECK(error_class(rc) == MPI_ERR_REQUEST);
  CHECK(r[0] != MPI_REQUEST_NULL);
  CHECK(r[1] != MPI_REQUEST_NULL);
  // A plain MPI request is not an mpix one either.
  long dummy = 0;
  MPI_Request plain = MPI_REQUEST_NULL;
  REQUIRE(MPI_Irecv(&dummy, 1, MPI_LONG, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &plain) == MPI_SUCCESS);
  r[2] = plain;
  rc = MPIX_Waitall_enqueue(3, r, MPI_STATUSES_IGNORE);
  CHECK(error_class(rc) == MPI_ERR_REQUEST);
  CHECK(r[2] == plain);
  REQUIRE(MPI_Wait(&plain, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  // Both requests are still whole: the stream waits for them and the data arrives.
  REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(r[0] == MPI_REQUEST_NULL);
  CHECK(r[1] == MPI_REQUEST_NULL);
  sc.sync();
  CHECK(in == prev);
}

TEST_CASE("a derived datatype freed right after the call is still used correctly", "[fastpath]") {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  HostStreamComm sc;
  for (int i = 0; i < 3; ++i) {
    // Same handle values may come back for a new derived type each round: it must be held
    // (duplicated) every time, never taken for a named type.
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int out[8], in[8];
    for (int k = 0; k < 8; ++k) {
      out[k] = rank * 100 + i * 10 + k;
      in[k] = -1;
    }
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in, 1, vec, prev, 3, sc.comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out, 1, vec, next, 3, sc.comm, &r[1]) == MPI_SUCCESS);
    MPI_Type_free(&vec);
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    sc.sync();
    for (int k = 0; k < 8; ++k) CHECK(in[k] == (k % 2 ? -1 : prev * 100 + i * 10 + k));
  }
}

TEST_CASE("threads switch communicators while others enqueue", "[fastpath][threads]") {
  const int nthreads = 3, ncomms = 3, iters = 60;
  std::vector<std::unique_ptr<HostStreamComm>> sc;
  for (int t = 0; t < nthreads * ncomms; ++t) sc.push_back(std::make_unique<HostStreamComm>());
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  std::vector<long> bad(nthreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<long> out(iters), in(iters, -1);
      std::vector<MPI_Request> reqs(2 * iters);
      for (int i = 0; i < iters; ++i) {
        HostStreamComm &c = *sc[t * ncomms + i % ncomms];  // a different comm every call
        out[i] = (t * iters + i) * 64L + rank;
        bad[t] += MPIX_Irecv_enqueue(&in[i], 1, MPI_LONG, prev, i, c.comm, &reqs[i]) != 0;
        bad[t] += MPIX_Isend_enqueue(&out[i], 1, MPI_LONG, next, i, c.comm, &reqs[iters + i]) != 0;
      }
      // Waitall across the thread's streams: one batch per run of same-stream requests.
      bad[t] += MPIX_Waitall_enqueue(2 * iters, reqs.data(), MPI_STATUSES_IGNORE) != 0;
      for (int k = 0; k < ncomms; ++k)
        bad[t] += MPIX_Stream_synchronize(sc[t * ncomms + k]->stream) != 0;
      for (int i = 0; i < iters; ++i) bad[t] += in[i] != (t * iters + i) * 64L + prev;
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < nthreads; ++t) CHECK(bad[t] == 0);
}
