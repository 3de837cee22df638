// A shared-memory file left behind by a killed process must not stop mpix's shm endpoint.
// libfabric's shm names an endpoint "<pid>:0:0" unless told otherwise, and its file
// (/dev/shm/<pid>:0:0) outlives a process killed without cleanup; a later process with the same
// pid then failed fi_enable with EBUSY. Each rank here plays that later process: it creates
// /dev/shm/<its pid>:0:0 before its first stream communicator (where provider ofi opens its
// endpoint), then exchanges messages over shm. Run under MPIX_OFI_PROVIDER=shm.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "mpi/test_util.hpp"

namespace {

// /dev/shm/<pid>:0:0 while it lives; removed afterwards if this made it (one a real killed
// process left is fine too, and left alone).
class StaleShmFile {
 public:
  StaleShmFile() {
    std::snprintf(name_, sizeof name_, "/%ld:0:0", static_cast<long>(getpid()));
    const int fd = shm_open(name_, O_RDWR | O_CREAT | O_EXCL, 0600);
    made_ = fd >= 0;
    if (made_) {
      REQUIRE(ftruncate(fd, 4096) == 0);
      close(fd);
    }
  }
  ~StaleShmFile() {
    if (made_) shm_unlink(name_);
  }
  StaleShmFile(const StaleShmFile &) = delete;
  StaleShmFile &operator=(const StaleShmFile &) = delete;

 private:
  char name_[64] = {};
  bool made_ = false;
};

}  // namespace

TEST_CASE("a stale /dev/shm file with this pid's default shm name is not in the way",
          "[ofi][shm]") {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  REQUIRE(size == 2);
  StaleShmFile stale;
  mpix_test::HostStreamComm c;  // the endpoint opens here (fi_enable failed with EBUSY before)
  const int peer = 1 - rank;
  std::vector<int> out(1000), in(1000, -1);
  for (int i = 0; i < 1000; ++i) out[i] = rank * 100000 + i;
  for (int round = 0; round < 3; ++round) {
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(in.data(), 1000, MPI_INT, peer, round, c.comm, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(out.data(), 1000, MPI_INT, peer, round, c.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    c.sync();
    for (int i = 0; i < 1000; ++i) REQUIRE(in[i] == peer * 100000 + i);
  }
}
