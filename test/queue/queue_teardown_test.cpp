// A queue's private stream torn down while its stream is busy (issue 15, item 6): a queue on a
// stream communicator's stream, its ops completed in stream order by MPIX_Waitall_enqueue, the
// queue freed, then an ordinary exchange on the same stream communicator. The agent may drop the
// last reference to the queue's ops (and so to the queue's stream) while the host stream waits
// for that exchange, which only the agent can complete: the agent must never wait for a stream.
// Repeated many times, since the agent's last reference falls at a different moment each time.
#include <mpi.h>

#include <cstdlib>

#include "catch.hpp"
#include "mpi/test_util.hpp"
#include "mpix/mpix.h"

namespace {

int rounds() {
  const char *e = std::getenv("MPIX_TEST_ROUNDS");
  int n = e && *e ? std::atoi(e) : 500;
  return n > 0 ? n : 500;
}

}  // namespace

TEST_CASE("queue freed, then an exchange on the same stream communicator", "[queue][teardown]") {
  mpix_test::HostStreamComm hc;
  const MPI_Comm comm = hc.comm;
  const int rank = mpix_test::world_rank();
  const int peer = rank ^ 1, n = rounds();
  for (int it = 0; it < n; ++it) {
    MPIX_Queue q;
    REQUIRE(MPIX_Create_queue(comm, nullptr, &q) == MPI_SUCCESS);  // the comm's stream
    int qout = rank * 1000000 + it, qin = -1;
    MPI_Request qr[2];
    REQUIRE(MPIX_Enqueue_recv(&qin, 1, MPI_INT, peer, 1, comm, q, &qr[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_send(&qout, 1, MPI_INT, peer, 1, comm, q, &qr[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, qr, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    // Freed as soon as the queue's ops are complete (MPI_ERR_PENDING until then, nothing
    // freed): the agent then still holds the ops, and through them the queue's stream, while
    // the exchange below goes onto the same host stream.
    int rc;
    while ((rc = MPIX_Free_queue(q)) != MPI_SUCCESS)
      REQUIRE(mpix_test::error_class(rc) == MPI_ERR_PENDING);
    int out = rank * 1000000 + it + 7, in = -1;
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(&in, 1, MPI_INT, peer, 2, comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&out, 1, MPI_INT, peer, 2, comm, &r[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    hc.sync();
    REQUIRE(qin == peer * 1000000 + it);
    REQUIRE(in == peer * 1000000 + it + 7);
  }
}
