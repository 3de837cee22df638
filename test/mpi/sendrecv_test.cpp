// MPIX_Sendrecv_enqueue: MPI_Sendrecv in stream order. Rings (small and rendezvous-sized, where
// a send that waited for its own completion before the receive is posted would deadlock),
// MPI_PROC_NULL at the ends of a chain, the receive's status with wildcards, stream order, and
// bad arguments (error class, the argument named in the message, nothing enqueued).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

int count_of(const MPI_Status &st) {
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  return n;
}

// Runs @p call with stderr sent to a file and returns what it wrote (mpix logs each error once,
// naming the call and the argument).
template <class F>
std::string stderr_of(F call, int *rc) {
  char path[] = "/tmp/mpix_sendrecv_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  *rc = call();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  char buf[512];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return text;
}

}  // namespace

TEST_CASE("ring exchange: every rank receives its left neighbour's data", "[sendrecv]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  // 1 int, a small message, and one large enough for Open MPI's rendezvous protocol.
  for (int n : {1, 1000, 1 << 18}) {
    std::vector<int> out(static_cast<size_t>(n)), in(static_cast<size_t>(n), -1);
    for (int it = 0; it < 5; ++it) {
      for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = rank * 1000003 + it * 7 + i;
      MPI_Status st;
      REQUIRE(MPIX_Sendrecv_enqueue(out.data(), n, MPI_INT, right, 10 + it, in.data(), n, MPI_INT,
                                    left, 10 + it, s.comm, &st) == MPI_SUCCESS);
      s.sync();
      bool ok = true;
      for (int i = 0; i < n; ++i) ok &= in[static_cast<size_t>(i)] == left * 1000003 + it * 7 + i;
      CHECK(ok);
      CHECK(st.MPI_SOURCE == left);
      CHECK(st.MPI_TAG == 10 + it);
      CHECK(count_of(st) == n);
    }
  }
}

TEST_CASE("the stream reads the send buffer when it reaches the call, and goes on after both",
          "[sendrecv]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = -1, in = -1;
  Gate gate;
  gate.launch(s.hs);
  REQUIRE(MPIX_Sendrecv_enqueue(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, s.comm,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
  // Nothing has been sent yet: the stream is held before the call.
  out = rank + 500;
  Snapshot after;
  after.launch(s.hs, &in, 1);
  gate.release();
  s.sync();
  CHECK_FALSE(gate.timed_out());
  REQUIRE(after.taken.load());
  // Work enqueued after the call saw the received data: the stream waited for the receive.
  CHECK(after.seen[0] == left + 500);
  CHECK(in == left + 500);
}

TEST_CASE("MPI_PROC_NULL at the ends of a chain", "[sendrecv]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  // A non-periodic shift to the right: rank 0 receives from nobody, the last sends to nobody.
  const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int out[3] = {rank, rank + 1, rank + 2}, in[3] = {-7, -7, -7};
  MPI_Status st;
  REQUIRE(MPIX_Sendrecv_enqueue(out, 3, MPI_INT, right, 4, in, 3, MPI_INT, left, 4, s.comm, &st) ==
          MPI_SUCCESS);
  s.sync();
  if (left == MPI_PROC_NULL) {
    CHECK(in[0] == -7);  // untouched
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    CHECK(st.MPI_TAG == MPI_ANY_TAG);
    CHECK(count_of(st) == 0);
  } else {
    CHECK(in[0] == left);
    CHECK(in[2] == left + 2);
    CHECK(st.MPI_SOURCE == left);
    CHECK(count_of(st) == 3);
  }
  // Both ends MPI_PROC_NULL: completes at once, on every rank.
  REQUIRE(MPIX_Sendrecv_enqueue(out, 3, MPI_INT, MPI_PROC_NULL, 4, in, 3, MPI_INT, MPI_PROC_NULL, 4,
                                s.comm, &st) == MPI_SUCCESS);
  s.sync();
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  CHECK(count_of(st) == 0);
}

TEST_CASE("MPI_ANY_SOURCE and MPI_ANY_TAG: the status names the sender and its tag", "[sendrecv]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  // Each rank uses its own tag, and sends fewer ints than the receive allows.
  int out[4] = {rank, rank, rank, rank}, in[8];
  MPI_Status st;
  REQUIRE(MPIX_Sendrecv_enqueue(out, 1 + rank % 4, MPI_INT, right, 100 + rank, in, 8, MPI_INT,
                                MPI_ANY_SOURCE, MPI_ANY_TAG, s.comm, &st) == MPI_SUCCESS);
  s.sync();
  CHECK(st.MPI_SOURCE == left);
  CHECK(st.MPI_TAG == 100 + left);
  CHECK(count_of(st) == 1 + left % 4);
  CHECK(in[0] == left);
}

TEST_CASE("bad arguments: the error class, the argument named, nothing enqueued", "[sendrecv]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int a[4] = {1, 2, 3, 4}, b[4];
  auto sr = [&](const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc,
                MPI_Datatype rt, int src, int rtag, MPI_Comm comm) {
    return error_class(MPIX_Sendrecv_enqueue(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm,
                                             MPI_STATUS_IGNORE));
  };
  struct Case {
    const char *name, *arg;
    int want;
    std::function<int()> call;
  };
  const Case cases[] = {
      {"negative sendcount", "sendcount", MPI_ERR_COUNT,
       [&] { return sr(a, -1, MPI_INT, right, 0, b, 4, MPI_INT, left, 0, s.comm); }},
      {"negative recvcount", "recvcount", MPI_ERR_COUNT,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, -2, MPI_INT, left, 0, s.comm); }},
      {"null sendtype", "sendtype", MPI_ERR_TYPE,
       [&] { return sr(a, 4, MPI_DATATYPE_NULL, right, 0, b, 4, MPI_INT, left, 0, s.comm); }},
      {"null recvtype", "recvtype", MPI_ERR_TYPE,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, 4, MPI_DATATYPE_NULL, left, 0, s.comm); }},
      {"null sendbuf", "sendbuf", MPI_ERR_BUFFER,
       [&] { return sr(nullptr, 4, MPI_INT, right, 0, b, 4, MPI_INT, left, 0, s.comm); }},
      {"null recvbuf", "recvbuf", MPI_ERR_BUFFER,
       [&] { return sr(a, 4, MPI_INT, right, 0, nullptr, 4, MPI_INT, left, 0, s.comm); }},
      {"same buffer", "sendbuf and recvbuf", MPI_ERR_BUFFER,
       [&] { return sr(a, 4, MPI_INT, right, 0, a, 4, MPI_INT, left, 0, s.comm); }},
      {"dest out of range", "dest", MPI_ERR_RANK,
       [&] { return sr(a, 4, MPI_INT, size, 0, b, 4, MPI_INT, left, 0, s.comm); }},
      {"dest MPI_ANY_SOURCE", "dest", MPI_ERR_RANK,
       [&] { return sr(a, 4, MPI_INT, MPI_ANY_SOURCE, 0, b, 4, MPI_INT, left, 0, s.comm); }},
      {"source out of range", "source", MPI_ERR_RANK,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, 4, MPI_INT, -5, 0, s.comm); }},
      {"sendtag MPI_ANY_TAG", "sendtag", MPI_ERR_TAG,
       [&] { return sr(a, 4, MPI_INT, right, MPI_ANY_TAG, b, 4, MPI_INT, left, 0, s.comm); }},
      {"negative recvtag", "recvtag", MPI_ERR_TAG,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, 4, MPI_INT, left, -3, s.comm); }},
      {"MPI_COMM_NULL", "MPI_COMM_NULL", MPI_ERR_COMM,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, 4, MPI_INT, left, 0, MPI_COMM_NULL); }},
      {"communicator without a stream", "no stream", MPI_ERR_COMM,
       [&] { return sr(a, 4, MPI_INT, right, 0, b, 4, MPI_INT, left, 0, MPI_COMM_WORLD); }},
  };
  for (const Case &c : cases) {
    INFO(c.name);
    int cls = -1;
    const std::string log = stderr_of(c.call, &cls);
    CHECK(cls == c.want);
    CHECK(log.find("MPIX_Sendrecv_enqueue") != std::string::npos);
    CHECK(log.find(c.arg) != std::string::npos);
  }
  // Nothing was enqueued: a valid exchange matches only its own messages.
  int out = rank + 40, in = -1;
  MPI_Status st;
  REQUIRE(MPIX_Sendrecv_enqueue(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, MPI_ANY_SOURCE,
                                MPI_ANY_TAG, s.comm, &st) == MPI_SUCCESS);
  s.sync();
  CHECK(in == left + 40);
  CHECK(st.MPI_SOURCE == left);
  CHECK(st.MPI_TAG == 0);
}
