// Many enqueued ops in flight at once, completed by one host MPI_Waitall (issue 15, item 5):
// each rank of a pair enqueues N receives and N sends to its peer on a host stream, then waits
// on all 2N requests from the host. Every message is checked. N is MPIX_TEST_IN_FLIGHT (default
// 20,000); once 70,000 + 70,000 never completed under provider mpi.
#include <cstdlib>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

long in_flight() {
  const char *e = std::getenv("MPIX_TEST_IN_FLIGHT");
  long n = e && *e ? std::atol(e) : 20000;
  return n > 0 ? n : 20000;
}

long value(int rank, long k) { return static_cast<long>(rank) * 1000000007L + k; }

// Receives first or sends first, then one host MPI_Waitall over all of them.
void exchange(bool recvs_first) {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  const long n = in_flight();
  const std::size_t un = static_cast<std::size_t>(n);
  std::vector<long> out(un), in(un, -1);
  for (std::size_t k = 0; k < un; ++k) out[k] = value(rank, static_cast<long>(k));
  std::vector<MPI_Request> reqs(2 * un, MPI_REQUEST_NULL);
  auto recvs = [&] {
    for (std::size_t k = 0; k < un; ++k)
      REQUIRE(MPIX_Irecv_enqueue(&in[k], 1, MPI_LONG, peer, 5, s.comm, &reqs[k]) == MPI_SUCCESS);
  };
  auto sends = [&] {
    for (std::size_t k = 0; k < un; ++k)
      REQUIRE(MPIX_Isend_enqueue(&out[k], 1, MPI_LONG, peer, 5, s.comm, &reqs[un + k]) ==
              MPI_SUCCESS);
  };
  if (recvs_first) {
    recvs();
    sends();
  } else {
    sends();
    recvs();
  }
  REQUIRE(MPI_Waitall(static_cast<int>(2 * un), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  // Messages of one tag between one pair arrive in the order they were sent (non-overtaking).
  for (std::size_t k = 0; k < un; ++k) REQUIRE(in[k] == value(peer, static_cast<long>(k)));
  for (const MPI_Request &r : reqs) REQUIRE(r == MPI_REQUEST_NULL);
}

}  // namespace

TEST_CASE("N receives then N sends in flight, one host MPI_Waitall", "[in_flight]") {
  exchange(true);
}

TEST_CASE("N sends then N receives in flight, one host MPI_Waitall", "[in_flight]") {
  exchange(false);
}

// Provider mpi tests the oldest requests and a moving window of the rest on each agent loop
// (mpi_provider.hpp): a receive that can complete, posted behind 3000 that cannot yet, completes
// without them. Its sender sends the 3000 only once the receiver has seen it (or given up).
TEST_CASE("one completable receive behind 3000 pending ones completes", "[in_flight]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  const std::size_t n = 3000;
  if (rank % 2 == 0) {
    std::vector<long> in(n, -1);
    std::vector<MPI_Request> reqs(n, MPI_REQUEST_NULL);
    for (std::size_t k = 0; k < n; ++k)
      REQUIRE(MPIX_Irecv_enqueue(&in[k], 1, MPI_LONG, peer, 7, s.comm, &reqs[k]) == MPI_SUCCESS);
    long far = -1;
    MPI_Request far_req = MPI_REQUEST_NULL;
    REQUIRE(MPIX_Irecv_enqueue(&far, 1, MPI_LONG, peer, 8, s.comm, &far_req) == MPI_SUCCESS);
    // Seen within a few loops of the agent; 20 s leaves room for a loaded machine.
    const double deadline = MPI_Wtime() + 20;
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS && MPI_Wtime() < deadline)
      rc = MPI_Test(&far_req, &flag, MPI_STATUS_IGNORE);
    REQUIRE(rc == MPI_SUCCESS);
    int go = 1;
    REQUIRE(MPI_Send(&go, 1, MPI_INT, peer, 9, MPI_COMM_WORLD) == MPI_SUCCESS);
    REQUIRE(MPI_Waitall(static_cast<int>(n), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    if (!flag) REQUIRE(MPI_Wait(&far_req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(far == value(peer, -1));
    for (std::size_t k = 0; k < n; ++k) REQUIRE(in[k] == value(peer, static_cast<long>(k)));
    CHECK(flag == 1);  // last: a failure here leaves nothing in flight
  } else {
    long far = value(rank, -1);
    REQUIRE(MPI_Send(&far, 1, MPI_LONG, peer, 8, s.comm) == MPI_SUCCESS);
    int go = 0;
    REQUIRE(MPI_Recv(&go, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    std::vector<long> out(n);
    std::vector<MPI_Request> reqs(n, MPI_REQUEST_NULL);
    for (std::size_t k = 0; k < n; ++k) {
      out[k] = value(rank, static_cast<long>(k));
      REQUIRE(MPIX_Isend_enqueue(&out[k], 1, MPI_LONG, peer, 7, s.comm, &reqs[k]) == MPI_SUCCESS);
    }
    REQUIRE(MPI_Waitall(static_cast<int>(n), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
}
