// MPI-4 partitioned communication driven from host threads, two ranks: data and arrival per
// partition, different partition counts on the two sides, ranges and lists, persistent rounds,
// and bad input.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"

namespace {

int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

struct Pair {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1, peer = -1;
  Pair() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    peer = rank ^ 1;
  }
  ~Pair() { MPI_Comm_free(&comm); }
};

double value(int round, int i) { return round * 1e6 + i; }

// *p, read unseen by ThreadSanitizer: a peek at a receive partition that has not arrived, which
// the agent (a staged copy in) or the network writes later, ordered only by a message to and
// from the other process, which TSan cannot follow.
__attribute__((no_sanitize("thread"), noinline)) int peek(const int *p) { return *p; }

// Receiver side of a round: poll each partition, check its data as soon as it has arrived.
void recv_round(MPIX_Request &req, std::vector<double> &buf, int parts, int round, int peer) {
  const int per = static_cast<int>(buf.size()) / parts;
  REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
  std::vector<char> seen(parts, 0);
  int left = parts;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (left > 0) {
    for (int p = 0; p < parts; ++p) {
      if (seen[p]) continue;
      int flag = 0;
      REQUIRE(MPIX_Parrived(req, p, &flag) == MPI_SUCCESS);
      if (!flag) continue;
      seen[p] = 1;
      --left;
      for (int i = p * per; i < (p + 1) * per; ++i) REQUIRE(buf[i] == value(round, i));
    }
    REQUIRE(std::chrono::steady_clock::now() < give_up);
  }
  MPI_Status st;
  REQUIRE(MPIX_Wait(&req, &st) == MPI_SUCCESS);
  CHECK(st.MPI_SOURCE == peer);
  CHECK(st.MPI_TAG == 3);
  int n = -1;
  MPI_Get_count(&st, MPI_DOUBLE, &n);
  CHECK(n == static_cast<int>(buf.size()));
}

// Sender side: fill and mark partitions in a scrambled order.
void send_round(MPIX_Request &req, std::vector<double> &buf, int parts, int round) {
  const int per = static_cast<int>(buf.size()) / parts;
  REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
  for (int k = 0; k < parts; ++k) {
    const int p = (k * 5 + round) % parts;
    for (int i = p * per; i < (p + 1) * per; ++i) buf[i] = value(round, i);
    REQUIRE(MPIX_Pready(p, req) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

void exchange(int send_parts, int recv_parts, int total, int rounds) {
  Pair pr;
  std::vector<double> buf(total, -1.0);
  MPIX_Request req = MPIX_REQUEST_NULL;
  if (pr.rank == 0) {
    REQUIRE(MPIX_Psend_init(buf.data(), send_parts, total / send_parts, MPI_DOUBLE, pr.peer, 3,
                            pr.comm, MPI_INFO_NULL, &req) == MPI_SUCCESS);
    for (int r = 0; r < rounds; ++r) send_round(req, buf, send_parts, r);
  } else {
    REQUIRE(MPIX_Precv_init(buf.data(), recv_parts, total / recv_parts, MPI_DOUBLE, pr.peer, 3,
                            pr.comm, MPI_INFO_NULL, &req) == MPI_SUCCESS);
    for (int r = 0; r < rounds; ++r) recv_round(req, buf, recv_parts, r, pr.peer);
  }
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
  CHECK(req == MPIX_REQUEST_NULL);
}

}  // namespace

TEST_CASE("100 rounds of start / Pready / wait with equal partitions", "[partitioned]") {
  exchange(8, 8, 8 * 1024, 100);
}

TEST_CASE("1 send partition into 8 receive partitions", "[partitioned]") {
  exchange(1, 8, 8 * 512, 20);
}

TEST_CASE("8 send partitions into 1 receive partition", "[partitioned]") {
  exchange(8, 1, 8 * 512, 20);
}

TEST_CASE("6 send partitions into 4 receive partitions (straddling)", "[partitioned]") {
  exchange(6, 4, 12 * 100, 20);
}

TEST_CASE("a receive partition arrives only once every piece of it was sent", "[partitioned]") {
  Pair pr;
  std::vector<int> buf(64, -1);
  MPIX_Request req;
  if (pr.rank == 0) {
    REQUIRE(MPIX_Psend_init(buf.data(), 8, 8, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    for (int i = 0; i < 64; ++i) buf[i] = i;
    REQUIRE(MPIX_Pready_range(0, 3, req) == MPI_SUCCESS);  // the first half
    int go = 0;
    MPI_Recv(&go, 1, MPI_INT, pr.peer, 10, pr.comm, MPI_STATUS_IGNORE);
    const int rest[] = {7, 5, 4, 6};
    REQUIRE(MPIX_Pready_list(4, rest, req) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Precv_init(buf.data(), 2, 32, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    int flag = 0;
    while (!flag) REQUIRE(MPIX_Parrived(req, 0, &flag) == MPI_SUCCESS);
    for (int i = 0; i < 32; ++i) REQUIRE(buf[i] == i);
    // The second half was not marked ready yet: it cannot have arrived.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(MPIX_Parrived(req, 1, &flag) == MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK(peek(&buf[32]) == -1);
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, pr.peer, 10, pr.comm);
    REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 32; i < 64; ++i) REQUIRE(buf[i] == i);
  }
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

TEST_CASE("partitioned traffic never matches ordinary messages with the same tag",
          "[partitioned]") {
  Pair pr;
  std::vector<int> pbuf(16, -1);
  int plain = -1;
  MPIX_Request req;
  if (pr.rank == 0) {
    REQUIRE(MPIX_Psend_init(pbuf.data(), 2, 8, MPI_INT, pr.peer, 4, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    plain = 77;
    MPI_Send(&plain, 1, MPI_INT, pr.peer, 4, pr.comm);  // same comm, same tag
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    for (int i = 0; i < 16; ++i) pbuf[i] = 100 + i;
    REQUIRE(MPIX_Pready_range(0, 1, req) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Precv_init(pbuf.data(), 2, 8, MPI_INT, pr.peer, 4, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    MPI_Recv(&plain, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pr.comm, MPI_STATUS_IGNORE);
    CHECK(plain == 77);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 16; ++i) CHECK(pbuf[i] == 100 + i);
  }
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

TEST_CASE("two partitioned requests on one envelope match in init order", "[partitioned]") {
  Pair pr;
  std::vector<int> a(4, -1), b(4, -1);
  MPIX_Request ra, rb;
  if (pr.rank == 0) {
    REQUIRE(MPIX_Psend_init(a.data(), 1, 4, MPI_INT, pr.peer, 1, pr.comm, MPI_INFO_NULL, &ra) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Psend_init(b.data(), 2, 2, MPI_INT, pr.peer, 1, pr.comm, MPI_INFO_NULL, &rb) ==
            MPI_SUCCESS);
    for (int i = 0; i < 4; ++i) a[i] = 10 + i, b[i] = 20 + i;
    MPIX_Request both[2] = {rb, ra};
    REQUIRE(MPIX_Startall(2, both) == MPI_SUCCESS);
    REQUIRE(MPIX_Pready_range(0, 1, rb) == MPI_SUCCESS);  // the second one first
    REQUIRE(MPIX_Pready(0, ra) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&rb, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&ra, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Precv_init(a.data(), 4, 1, MPI_INT, pr.peer, 1, pr.comm, MPI_INFO_NULL, &ra) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Precv_init(b.data(), 1, 4, MPI_INT, pr.peer, 1, pr.comm, MPI_INFO_NULL, &rb) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Start(&ra) == MPI_SUCCESS);
    REQUIRE(MPIX_Start(&rb) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&ra, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait(&rb, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 4; ++i) {
      CHECK(a[i] == 10 + i);
      CHECK(b[i] == 20 + i);
    }
  }
  REQUIRE(MPIX_Request_free(&ra) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&rb) == MPI_SUCCESS);
}

TEST_CASE("MPIX_Test completes a round without blocking", "[partitioned]") {
  Pair pr;
  std::vector<int> buf(10, 0);
  MPIX_Request req;
  const bool sender = pr.rank == 0;
  if (sender)
    REQUIRE(MPIX_Psend_init(buf.data(), 5, 2, MPI_INT, pr.peer, 2, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
  else
    REQUIRE(MPIX_Precv_init(buf.data(), 5, 2, MPI_INT, pr.peer, 2, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
  REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
  int flag = 1;
  if (sender) {
    REQUIRE(MPIX_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(flag == 0);  // nothing is ready yet
    for (int i = 0; i < 10; ++i) buf[i] = i + 1;
    REQUIRE(MPIX_Pready_range(0, 4, req) == MPI_SUCCESS);
  }
  flag = 0;
  while (!flag) REQUIRE(MPIX_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (!sender)
    for (int i = 0; i < 10; ++i) CHECK(buf[i] == i + 1);
  // Inactive now: wait and test return at once.
  REQUIRE(MPIX_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(flag == 1);
  REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

TEST_CASE("sizes that do not fit give the receiver an error", "[partitioned][errors]") {
  Pair pr;
  std::vector<int> buf(16, 0);
  MPIX_Request req;
  if (pr.rank == 0) {
    REQUIRE(MPIX_Psend_init(buf.data(), 4, 4, MPI_INT, pr.peer, 6, pr.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);  // 16 ints
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    REQUIRE(MPIX_Pready_range(0, 3, req) == MPI_SUCCESS);
    // The receiver never receives them; 16-byte messages complete eagerly all the same.
    REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
    MPI_Barrier(pr.comm);
  } else {
    REQUIRE(MPIX_Precv_init(buf.data(), 2, 4, MPI_INT, pr.peer, 6, pr.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);  // 8 ints
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    MPI_Status st;
    CHECK(err_class(MPIX_Wait(&req, &st)) == MPI_ERR_TRUNCATE);
    CHECK(err_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE);
    REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
    MPI_Barrier(pr.comm);
  }
}

// After a size mismatch the receiver still takes the sender's partition messages (and drops
// them): a sender of large (rendezvous) partitions completes its rounds, and no stale message
// is left to land in a later request's receive with the same tags.
TEST_CASE("a size mismatch drains the sender's partitions: no hang, no stale messages",
          "[partitioned][errors]") {
  Pair pr;
  const int parts = 4, per = 256 * 1024;  // 1 MiB partitions: beyond any eager limit
  for (int round_set = 0; round_set < 2; ++round_set) {
    // round_set 0: large partitions (the sender would wait for ever); 1: small ones (eager:
    // they would stay queued at the receiver and match the next request's receives).
    const int n = round_set == 0 ? per : 4;
    std::vector<int> buf(static_cast<std::size_t>(parts) * n, 7);
    MPIX_Request req = MPIX_REQUEST_NULL;
    if (pr.rank == 0) {
      REQUIRE(MPIX_Psend_init(buf.data(), parts, n, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL,
                              &req) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Precv_init(buf.data(), 2, n, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL,
                              &req) == MPI_SUCCESS);  // half the sender's data
    }
    for (int round = 0; round < 2; ++round) {
      REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
      if (pr.rank == 0) REQUIRE(MPIX_Pready_range(0, parts - 1, req) == MPI_SUCCESS);
      MPI_Status st;
      int flag = 0, rc = MPI_SUCCESS;
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!flag && std::chrono::steady_clock::now() < give_up) rc = MPIX_Test(&req, &flag, &st);
      REQUIRE(flag == 1);  // the sender's round completed: the receiver took its messages
      CHECK(err_class(rc) == (pr.rank == 0 ? MPI_SUCCESS : MPI_ERR_TRUNCATE));
    }
    REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
    MPI_Barrier(pr.comm);
  }
  // A matching pair on the same tag: the data is this round's, not a leftover of the above.
  std::vector<int> buf(16, 0);
  MPIX_Request req = MPIX_REQUEST_NULL;
  if (pr.rank == 0) {
    for (int i = 0; i < 16; ++i) buf[i] = 100 + i;
    REQUIRE(MPIX_Psend_init(buf.data(), 4, 4, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    REQUIRE(MPIX_Pready_range(0, 3, req) == MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Precv_init(buf.data(), 4, 4, MPI_INT, pr.peer, 9, pr.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < 16; ++i) CHECK(buf[i] == 100 + i);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

TEST_CASE("NULL request pointers are MPI_ERR_ARG, bad request handles MPI_ERR_REQUEST",
          "[partitioned][errors]") {
  int flag = 0;
  CHECK(err_class(MPIX_Start(nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Start_enqueue(nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Startall(1, nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Wait(nullptr, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Test(nullptr, &flag, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pwait_enqueue(nullptr, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Request_free(nullptr)) == MPI_ERR_ARG);
  MPIX_Request null_req = MPIX_REQUEST_NULL;
  auto forged = reinterpret_cast<MPIX_Request>(static_cast<uintptr_t>(0x5eed));
  CHECK(err_class(MPIX_Start(&null_req)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Start(&forged)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Startall(1, &forged)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Test(&forged, &flag, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Request_free(&null_req)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Pready(0, forged)) == MPI_ERR_REQUEST);
}

TEST_CASE("bad partitioned input gets MPI error classes", "[partitioned][errors]") {
  Pair pr;
  int buf[8] = {0};
  MPIX_Request s = MPIX_REQUEST_NULL, r = MPIX_REQUEST_NULL;
  // Init arguments.
  CHECK(err_class(MPIX_Psend_init(buf, 2, 4, MPI_INT, pr.peer, 0, pr.comm, MPI_INFO_NULL,
                                  nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Psend_init(buf, -1, 4, MPI_INT, pr.peer, 0, pr.comm, MPI_INFO_NULL, &s)) ==
        MPI_ERR_ARG);
  CHECK(err_class(MPIX_Psend_init(buf, 2, -4, MPI_INT, pr.peer, 0, pr.comm, MPI_INFO_NULL, &s)) ==
        MPI_ERR_COUNT);
  CHECK(err_class(MPIX_Psend_init(buf, 2, 4, MPI_DATATYPE_NULL, pr.peer, 0, pr.comm, MPI_INFO_NULL,
                                  &s)) == MPI_ERR_TYPE);
  CHECK(err_class(MPIX_Psend_init(nullptr, 2, 4, MPI_INT, pr.peer, 0, pr.comm, MPI_INFO_NULL,
                                  &s)) == MPI_ERR_BUFFER);
  CHECK(err_class(MPIX_Psend_init(buf, 2, 4, MPI_INT, 42, 0, pr.comm, MPI_INFO_NULL, &s)) ==
        MPI_ERR_RANK);
  CHECK(err_class(MPIX_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, pr.comm, MPI_INFO_NULL,
                                  &r)) == MPI_ERR_RANK);
  CHECK(err_class(MPIX_Precv_init(buf, 2, 4, MPI_INT, pr.peer, MPI_ANY_TAG, pr.comm, MPI_INFO_NULL,
                                  &r)) == MPI_ERR_TAG);
  CHECK(err_class(MPIX_Psend_init(buf, 2, 4, MPI_INT, pr.peer, 0, MPI_COMM_NULL, MPI_INFO_NULL,
                                  &s)) == MPI_ERR_COMM);
  CHECK(s == MPIX_REQUEST_NULL);

  // A request pair to this process itself, so misuse needs no peer's cooperation.
  REQUIRE(MPIX_Psend_init(buf, 4, 1, MPI_INT, pr.rank, 5, pr.comm, MPI_INFO_NULL, &s) ==
          MPI_SUCCESS);
  int rbuf[4] = {0};
  REQUIRE(MPIX_Precv_init(rbuf, 2, 2, MPI_INT, pr.rank, 5, pr.comm, MPI_INFO_NULL, &r) ==
          MPI_SUCCESS);
  int flag = 0;
  CHECK(err_class(MPIX_Pready(0, s)) == MPI_ERR_REQUEST);           // inactive
  CHECK(err_class(MPIX_Parrived(r, 0, &flag)) == MPI_ERR_REQUEST);  // inactive
  REQUIRE(MPIX_Start(&s) == MPI_SUCCESS);
  REQUIRE(MPIX_Start(&r) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Start(&s)) == MPI_ERR_REQUEST);  // already active
  MPIX_Request both[2] = {r, s};
  CHECK(err_class(MPIX_Startall(2, both)) == MPI_ERR_REQUEST);
  CHECK(err_class(MPIX_Pready(4, s)) == MPI_ERR_ARG);  // out of range
  CHECK(err_class(MPIX_Pready(-1, s)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pready_range(2, 1, s)) == MPI_ERR_ARG);  // low > high
  CHECK(err_class(MPIX_Pready_range(3, 4, s)) == MPI_ERR_ARG);  // 4 out of range: none marked
  const int dup[] = {1, 1};
  CHECK(err_class(MPIX_Pready_list(2, dup, s)) == MPI_ERR_ARG);     // duplicate: none marked
  CHECK(err_class(MPIX_Pready(0, r)) == MPI_ERR_REQUEST);           // a receive request
  CHECK(err_class(MPIX_Parrived(s, 0, &flag)) == MPI_ERR_REQUEST);  // a send request
  CHECK(err_class(MPIX_Parrived(r, 2, &flag)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Parrived(r, 0, nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Request_free(&s)) == MPI_ERR_REQUEST);  // active
  CHECK(s != MPIX_REQUEST_NULL);
  // Partition 3 was not marked by the failed range, nor 1 by the failed list.
  for (int i = 0; i < 4; ++i) buf[i] = 40 + i;
  REQUIRE(MPIX_Pready(3, s) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready(3, s)) == MPI_ERR_ARG);  // twice in one round
  const int rest[] = {0, 1, 2};
  REQUIRE(MPIX_Pready_list(3, rest, s) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < 4; ++i) CHECK(rbuf[i] == 40 + i);
  CHECK(err_class(MPIX_Pready(0, s)) == MPI_ERR_REQUEST);  // inactive again
  REQUIRE(MPIX_Request_free(&s) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&r) == MPI_SUCCESS);
  MPIX_Request stale = s;
  CHECK(err_class(MPIX_Start(&stale)) == MPI_ERR_REQUEST);  // MPIX_REQUEST_NULL
  CHECK(err_class(MPIX_Request_free(&stale)) == MPI_ERR_REQUEST);
  // MPIX_Wait on MPIX_REQUEST_NULL: an empty status.
  MPI_Status st;
  REQUIRE(MPIX_Wait(&stale, &st) == MPI_SUCCESS);
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE);
  // Enqueued start on a plain communicator.
  REQUIRE(MPIX_Psend_init(buf, 1, 1, MPI_INT, MPI_PROC_NULL, 0, pr.comm, MPI_INFO_NULL, &s) ==
          MPI_SUCCESS);
  CHECK(err_class(MPIX_Start_enqueue(&s)) == MPI_ERR_COMM);
  REQUIRE(MPIX_Start(&s) == MPI_SUCCESS);  // MPI_PROC_NULL: completes at once
  REQUIRE(MPIX_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&s) == MPI_SUCCESS);
}
