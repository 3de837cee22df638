// Threads that cannot be started (issue 15 item 11): with the address space limited so that
// no new thread stack can be mapped (test/address_space_limit.hpp), the calls that start a
// host-stream worker or the agent return MPI_ERR_OTHER / MPI_ERR_NO_MEM instead of letting
// std::system_error abort the process, and leave nothing behind. One test case, run in a
// fresh process: a thread that exited earlier would leave a cached stack to reuse.
#include "address_space_limit.hpp"
#include "test_util.hpp"

using namespace mpix_test;

namespace {

bool thread_error(int rc) {
  const int cls = error_class(rc);
  return cls == MPI_ERR_OTHER || cls == MPI_ERR_NO_MEM;
}

}  // namespace

TEST_CASE("thread creation failures are MPI error classes and leave nothing behind",
          "[thread_failure]") {
  if (!address_space_limit_usable()) {
    WARN("skipped: sanitizer build (an address-space limit trips the sanitizer itself)");
    return;
  }
  const int rank = world_rank();
  const int peer = (rank ^ 1) < world_size() ? rank ^ 1 : MPI_PROC_NULL;
  // 1. A host stream that mpix makes for MPIX_Stream_create (type without a value).
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Stream st = MPIX_STREAM_NULL;
  int rc = MPI_SUCCESS;
  {
    AddressSpaceLimit lim;
    REQUIRE(lim.ok());
    rc = MPIX_Stream_create(info, &st);
  }
  CHECK(thread_error(rc));
  CHECK(st == MPIX_STREAM_NULL);
  MPI_Info_free(&info);
  // 2. The agent (and a general stream's host stream), started by the first enqueue.
  MPIX_Stream gs = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Stream_create(MPI_INFO_NULL, &gs) == MPI_SUCCESS);
  MPI_Comm c = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, gs, &c) == MPI_SUCCESS);
  int x = rank, y = -1;
  MPI_Request r = MPI_REQUEST_NULL;
  {
    AddressSpaceLimit lim;
    REQUIRE(lim.ok());
    rc = MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 1, c, &r);
  }
  CHECK(thread_error(rc));
  CHECK(r == MPI_REQUEST_NULL);
  // Nothing pending: the communicator and the stream free.
  CHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
  CHECK(MPIX_Stream_free(&gs) == MPI_SUCCESS);
  // With the limit gone, everything works.
  HostStreamComm s;
  MPI_Request rr[2];
  REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, peer, 2, s.comm, &rr[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 2, s.comm, &rr[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(2, rr, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  s.sync();
  CHECK(y == (peer == MPI_PROC_NULL ? -1 : peer));
}
