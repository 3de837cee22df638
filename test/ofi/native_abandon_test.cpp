// Native triggered ops (provider ofi over sockets, MPIX_OFI_NATIVE_TRIGGER=1) are handed to
// libfabric when they are enqueued, waiting on a counter that the agent steps once per op the
// stream reaches. An enqueue that fails after that (its trigger could not be written: the
// injected fault "trigger") leaves a triggered op libfabric cannot give back. The next op of
// that stream used to step the counter onto it: the failed send went out after all, from a
// buffer the caller had freed (heap-use-after-free under ASan), in the next send's place. Now
// the stream's later sends fail at once with MPI_ERR_OTHER, nothing failed reaches the peer,
// and other streams work on.
#include <mpi.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/fault.hpp"
#include "mpi/test_util.hpp"

using namespace mpix_test;

TEST_CASE("a native send that failed after libfabric took it never goes out", "[ofi][fault]") {
  const int rank = world_rank(), peer = rank ^ 1;
  REQUIRE(world_size() == 2);
  constexpr int kN = 256, kTag = 7;
  HostStreamComm bad, good;
  if (rank == 0) {
    // Fail each step in turn until the one after the op went to libfabric ("trigger").
    bool hit = false;
    for (int n = 1; n < 32 && !hit; ++n) {
      auto zombie = std::make_unique<std::vector<int>>(kN, -1);  // never to be seen by the peer
      MPI_Request r = MPI_REQUEST_NULL;
      mpix::fault_arm(n);
      const int rc = MPIX_Isend_enqueue(zombie->data(), kN, MPI_INT, peer, kTag, bad.comm, &r);
      const char *fired = mpix::fault_fired();
      mpix::fault_arm(0);
      REQUIRE(fired);  // every step before "trigger" fails the call; none is past it
      hit = std::strcmp(fired, "trigger") == 0;
      if (r != MPI_REQUEST_NULL)
        CHECK(error_class(MPI_Wait(&r, MPI_STATUS_IGNORE)) == MPI_ERR_OTHER);
      else CHECK(error_class(rc) == MPI_ERR_OTHER);
      // zombie freed here: a send that went out later would read freed memory
    }
    REQUIRE(hit);
    bad.sync();
    // The stream's next send cannot be ordered behind the op libfabric keeps: refused.
    std::vector<int> next(kN, -2);
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(error_class(MPIX_Isend_enqueue(next.data(), kN, MPI_INT, peer, kTag, bad.comm, &r)) ==
          MPI_ERR_OTHER);
    CHECK(r == MPI_REQUEST_NULL);
    // Another stream works.
    std::vector<int> out(kN);
    for (int i = 0; i < kN; ++i) out[i] = 1000 + i;
    REQUIRE(MPIX_Send_enqueue(out.data(), kN, MPI_INT, peer, kTag, good.comm) == MPI_SUCCESS);
    good.sync();
  } else {
    std::vector<int> in(kN, 0);
    REQUIRE(MPIX_Recv_enqueue(in.data(), kN, MPI_INT, peer, kTag, good.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    good.sync();
    for (int i = 0; i < kN; ++i) REQUIRE(in[i] == 1000 + i);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
