// Kernel-style partitioned communication without a GPU: host functions on a host stream play
// the kernels, calling the device API of mpix/mpix_device.h (built for the host here), and
// rounds are started and completed in stream order with MPIX_Start_enqueue /
// MPIX_Pwait_enqueue, no host synchronisation between rounds; partitions marked ready by the
// stream itself (MPIX_Pready_enqueue). Also device-side misuse.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_device.h"
#include "mpix/mpix_host_stream.h"

namespace {

int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

struct HostStreamComm {
  mpix_host_stream_t hs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1, peer = -1;
  HostStreamComm() {
    REQUIRE(mpix_host_stream_create(&hs) == 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "mpix_host_stream");
    REQUIRE(MPIX_Info_set_hex(info, "value", &hs, sizeof hs) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_create(info, &stream) == MPI_SUCCESS);
    MPI_Info_free(&info);
    REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS);
    MPI_Comm_rank(comm, &rank);
    peer = rank ^ 1;
  }
  ~HostStreamComm() {
    MPIX_Stream_synchronize(stream);
    MPI_Comm_free(&comm);
    MPIX_Stream_free(&stream);
    mpix_host_stream_destroy(&hs);
  }
};

constexpr int kParts = 8, kPer = 64, kRounds = 100;

int value(int round, int i) { return round * 100000 + i; }

// "Kernel" of the sender: one "block" per partition writes it, then marks it ready.
struct Produce {
  int *buf;
  MPIX_Prequest preq;
  int round;
  std::atomic<int> *errors;
};
void produce(void *a) {
  auto *p = static_cast<Produce *>(a);
  for (int k = 0; k < kParts; ++k) {
    const int part = (k * 3 + p->round) % kParts;  // partitions finish out of order
    for (int i = part * kPer; i < (part + 1) * kPer; ++i) p->buf[i] = value(p->round, i);
    if (MPIX_Pready(part, p->preq) != MPI_SUCCESS) p->errors->fetch_add(1);
  }
}

// "Kernel" of the receiver: polls each partition's arrival, then checks its data.
struct Consume {
  const int *buf;
  MPIX_Prequest preq;
  int round;
  std::atomic<int> *good, *bad;
};
void consume(void *a) {
  auto *c = static_cast<Consume *>(a);
  for (int part = kParts - 1; part >= 0; --part) {
    int flag = 0;
    while (!flag)
      if (MPIX_Parrived(c->preq, part, &flag) != MPI_SUCCESS) c->bad->fetch_add(1);
    bool ok = true;
    for (int i = part * kPer; i < (part + 1) * kPer; ++i) ok &= c->buf[i] == value(c->round, i);
    (ok ? c->good : c->bad)->fetch_add(1);
  }
}

}  // namespace

TEST_CASE("100 rounds with enqueued start and wait and device-API partitions, no host sync",
          "[partitioned][enqueue]") {
  HostStreamComm sc;
  std::vector<int> buf(kParts * kPer, -1);
  MPIX_Request req;
  const bool sender = sc.rank == 0;
  if (sender)
    REQUIRE(MPIX_Psend_init(buf.data(), kParts, kPer, MPI_INT, sc.peer, 0, sc.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);
  else
    REQUIRE(MPIX_Precv_init(buf.data(), kParts, kPer, MPI_INT, sc.peer, 0, sc.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);
  MPIX_Prequest preq;
  REQUIRE(MPIX_Prequest_create(req, &preq) == MPI_SUCCESS);
  std::atomic<int> errors{0}, good{0}, bad{0};
  std::vector<Produce> pargs(kRounds);
  std::vector<Consume> cargs(kRounds);
  std::vector<MPI_Status> status(kRounds);
  for (int r = 0; r < kRounds; ++r) {
    REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
    if (sender) {
      pargs[r] = Produce{buf.data(), preq, r, &errors};
      REQUIRE(mpix_host_stream_launch(sc.hs, produce, &pargs[r]) == 0);
    } else {
      cargs[r] = Consume{buf.data(), preq, r, &good, &bad};
      REQUIRE(mpix_host_stream_launch(sc.hs, consume, &cargs[r]) == 0);
    }
    REQUIRE(MPIX_Pwait_enqueue(&req, &status[r]) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  CHECK(errors.load() == 0);
  CHECK(bad.load() == 0);
  if (!sender) {
    CHECK(good.load() == kRounds * kParts);
    for (int r = 0; r < kRounds; ++r) {
      int n = -1;
      MPI_Get_count(&status[r], MPI_INT, &n);
      REQUIRE(n == kParts * kPer);
      REQUIRE(status[r].MPI_SOURCE == sc.peer);
    }
  }
  REQUIRE(MPIX_Prequest_free(&preq) == MPI_SUCCESS);
  CHECK(preq == MPIX_PREQUEST_NULL);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

namespace {
// A "kernel" that knows nothing of mpix: writes a whole round's buffer.
struct Fill {
  int *buf;
  int round;
};
void fill(void *a) {
  auto *f = static_cast<Fill *>(a);
  for (int i = 0; i < kParts * kPer; ++i) f->buf[i] = value(f->round, i);
}
}  // namespace

// A persistent send driven by the stream (MPI_Send_init / MPI_Start in stream order): the
// partitions are marked ready by the stream after the writer, with every form of the call.
TEST_CASE("100 rounds marked ready in stream order by MPIX_Pready_enqueue, no host sync",
          "[partitioned][enqueue][pready_enqueue]") {
  HostStreamComm sc;
  std::vector<int> buf(kParts * kPer, -1);
  MPIX_Request req;
  const bool sender = sc.rank == 0;
  if (sender)
    REQUIRE(MPIX_Psend_init(buf.data(), kParts, kPer, MPI_INT, sc.peer, 3, sc.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);
  else
    REQUIRE(MPIX_Precv_init(buf.data(), kParts, kPer, MPI_INT, sc.peer, 3, sc.comm, MPI_INFO_NULL,
                            &req) == MPI_SUCCESS);
  MPIX_Prequest preq = MPIX_PREQUEST_NULL;
  if (!sender) REQUIRE(MPIX_Prequest_create(req, &preq) == MPI_SUCCESS);
  std::atomic<int> good{0}, bad{0};
  std::vector<Fill> fargs(kRounds);
  std::vector<Consume> cargs(kRounds);
  const int evens[kParts / 2] = {6, 0, 4, 2};
  for (int r = 0; r < kRounds; ++r) {
    REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
    if (sender) {
      fargs[r] = Fill{buf.data(), r};
      REQUIRE(mpix_host_stream_launch(sc.hs, fill, &fargs[r]) == 0);
      if (r % 2 == 0) {
        REQUIRE(MPIX_Pready_range_enqueue(0, kParts - 1, req) == MPI_SUCCESS);
      } else {
        REQUIRE(MPIX_Pready_list_enqueue(kParts / 2, evens, req) == MPI_SUCCESS);
        for (int p = 1; p < kParts; p += 2) REQUIRE(MPIX_Pready_enqueue(p, req) == MPI_SUCCESS);
      }
    } else {
      cargs[r] = Consume{buf.data(), preq, r, &good, &bad};
      REQUIRE(mpix_host_stream_launch(sc.hs, consume, &cargs[r]) == 0);
    }
    REQUIRE(MPIX_Pwait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  CHECK(bad.load() == 0);
  if (!sender) CHECK(good.load() == kRounds * kParts);
  if (preq != MPIX_PREQUEST_NULL) REQUIRE(MPIX_Prequest_free(&preq) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

TEST_CASE("MPIX_Pready_enqueue misuse gets MPI error classes, nothing marked",
          "[partitioned][enqueue][pready_enqueue][errors]") {
  HostStreamComm sc;
  std::vector<int> sbuf(4, 0), rbuf(4, -1);
  MPIX_Request s, r;
  REQUIRE(MPIX_Psend_init(sbuf.data(), 4, 1, MPI_INT, sc.peer, 5, sc.comm, MPI_INFO_NULL, &s) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Precv_init(rbuf.data(), 4, 1, MPI_INT, sc.peer, 5, sc.comm, MPI_INFO_NULL, &r) ==
          MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready_enqueue(0, s)) == MPI_ERR_REQUEST);  // not started
  CHECK(err_class(MPIX_Pready_enqueue(0, MPIX_REQUEST_NULL)) == MPI_ERR_REQUEST);
  MPIX_Request both[2] = {r, s};
  REQUIRE(MPIX_Startall_enqueue(2, both) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready_enqueue(0, r)) == MPI_ERR_REQUEST);  // a receive request
  CHECK(err_class(MPIX_Pready_enqueue(4, s)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pready_enqueue(-1, s)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pready_range_enqueue(2, 1, s)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pready_range_enqueue(2, 4, s)) == MPI_ERR_ARG);  // nothing of it marked
  CHECK(err_class(MPIX_Pready_list_enqueue(-1, nullptr, s)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Pready_list_enqueue(1, nullptr, s)) == MPI_ERR_ARG);
  const int dup[2] = {1, 1};
  CHECK(err_class(MPIX_Pready_list_enqueue(2, dup, s)) == MPI_ERR_ARG);
  CHECK(MPIX_Pready_list_enqueue(0, nullptr, s) == MPI_SUCCESS);  // marks nothing
  sbuf = {10 * sc.rank, 10 * sc.rank + 1, 10 * sc.rank + 2, 10 * sc.rank + 3};
  REQUIRE(MPIX_Pready_enqueue(0, s) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready_enqueue(0, s)) == MPI_ERR_ARG);  // twice, both enqueued
  CHECK(err_class(MPIX_Pready(0, s)) == MPI_ERR_ARG);          // the host after the stream's
  REQUIRE(MPIX_Pready(1, s) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready_enqueue(1, s)) == MPI_ERR_ARG);  // the stream after the host's
  REQUIRE(MPIX_Pready_range_enqueue(2, 3, s) == MPI_SUCCESS);
  REQUIRE(MPIX_Pwaitall_enqueue(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  for (int i = 0; i < 4; ++i) CHECK(rbuf[static_cast<std::size_t>(i)] == 10 * sc.peer + i);
  // The next round starts clean: every partition may be marked again.
  REQUIRE(MPIX_Startall_enqueue(2, both) == MPI_SUCCESS);
  REQUIRE(MPIX_Pready_range_enqueue(0, 3, s) == MPI_SUCCESS);
  REQUIRE(MPIX_Pwaitall_enqueue(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&s) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&r) == MPI_SUCCESS);

  // A plain communicator has no stream to mark on.
  MPI_Comm plain;
  MPI_Comm_dup(MPI_COMM_WORLD, &plain);
  int x = 1;
  MPIX_Request p;
  REQUIRE(MPIX_Psend_init(&x, 1, 1, MPI_INT, MPI_PROC_NULL, 0, plain, MPI_INFO_NULL, &p) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Start(&p) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Pready_enqueue(0, p)) == MPI_ERR_COMM);
  REQUIRE(MPIX_Pready(0, p) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait(&p, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&p) == MPI_SUCCESS);
  MPI_Comm_free(&plain);
}

TEST_CASE("a halo's send and receive started and waited for together, 100 rounds",
          "[partitioned][enqueue][all]") {
  HostStreamComm sc;
  std::vector<int> sbuf(kParts * kPer, -1), rbuf(kParts * kPer, -1);
  MPIX_Request reqs[3] = {MPIX_REQUEST_NULL, MPIX_REQUEST_NULL, MPIX_REQUEST_NULL};
  REQUIRE(MPIX_Precv_init(rbuf.data(), kParts, kPer, MPI_INT, sc.peer, 2, sc.comm, MPI_INFO_NULL,
                          &reqs[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Psend_init(sbuf.data(), kParts, kPer, MPI_INT, sc.peer, 2, sc.comm, MPI_INFO_NULL,
                          &reqs[1]) == MPI_SUCCESS);
  MPIX_Prequest ps, pr;
  REQUIRE(MPIX_Prequest_create(reqs[1], &ps) == MPI_SUCCESS);
  REQUIRE(MPIX_Prequest_create(reqs[0], &pr) == MPI_SUCCESS);
  std::atomic<int> errors{0}, good{0}, bad{0};
  std::vector<Produce> pargs(kRounds);
  std::vector<Consume> cargs(kRounds);
  // Filled in stream order: one array per round, alive until the stream is synchronised.
  std::vector<std::vector<MPI_Status>> status(kRounds, std::vector<MPI_Status>(3));
  for (int r = 0; r < kRounds; ++r) {
    REQUIRE(MPIX_Startall_enqueue(2, reqs) == MPI_SUCCESS);
    pargs[r] = Produce{sbuf.data(), ps, r, &errors};
    REQUIRE(mpix_host_stream_launch(sc.hs, produce, &pargs[r]) == 0);
    cargs[r] = Consume{rbuf.data(), pr, r, &good, &bad};
    REQUIRE(mpix_host_stream_launch(sc.hs, consume, &cargs[r]) == 0);
    // The send first, the receive, and a null request (skipped, empty status).
    MPIX_Request order[3] = {reqs[1], reqs[0], MPIX_REQUEST_NULL};
    REQUIRE(MPIX_Pwaitall_enqueue(3, order, status[r].data()) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  CHECK(errors.load() == 0);
  CHECK(bad.load() == 0);
  CHECK(good.load() == kRounds * kParts);
  for (int r = 0; r < kRounds; ++r) {
    int n = -1;
    MPI_Get_count(&status[r][1], MPI_INT, &n);
    REQUIRE(n == kParts * kPer);
    REQUIRE(status[r][1].MPI_SOURCE == sc.peer);
    REQUIRE(status[r][1].MPI_TAG == 2);
    REQUIRE(status[r][2].MPI_SOURCE == MPI_ANY_SOURCE);  // the null request's empty status
    REQUIRE(status[r][2].MPI_TAG == MPI_ANY_TAG);
  }

  SECTION("misuse: nothing is started or waited for") {
    CHECK(err_class(MPIX_Startall_enqueue(-1, reqs)) == MPI_ERR_COUNT);
    CHECK(err_class(MPIX_Pwaitall_enqueue(1, nullptr, MPI_STATUSES_IGNORE)) == MPI_ERR_ARG);
    MPIX_Request twice[2] = {reqs[0], reqs[0]};
    CHECK(err_class(MPIX_Startall_enqueue(2, twice)) == MPI_ERR_REQUEST);
    CHECK(err_class(MPIX_Pwaitall_enqueue(2, reqs, MPI_STATUSES_IGNORE)) == MPI_ERR_REQUEST);
    // One already active: the other is not started either.
    REQUIRE(MPIX_Start_enqueue(&reqs[0]) == MPI_SUCCESS);
    CHECK(err_class(MPIX_Startall_enqueue(2, reqs)) == MPI_ERR_REQUEST);
    CHECK(err_class(MPIX_Pwaitall_enqueue(2, reqs, MPI_STATUSES_IGNORE)) == MPI_ERR_REQUEST);
    // A last exchange, whole: the receive is active, the send starts now.
    REQUIRE(MPIX_Startall_enqueue(1, &reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Pready_range(0, kParts - 1, reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Pwaitall_enqueue(2, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Prequest_free(&ps) == MPI_SUCCESS);
  REQUIRE(MPIX_Prequest_free(&pr) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&reqs[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&reqs[1]) == MPI_SUCCESS);
}

TEST_CASE("host and enqueued completion mix as MPI allows", "[partitioned][enqueue]") {
  HostStreamComm sc;
  std::vector<int> buf(4, 0);
  MPIX_Request req;
  const bool sender = sc.rank == 0;
  if (sender)
    REQUIRE(MPIX_Psend_init(buf.data(), 4, 1, MPI_INT, sc.peer, 1, sc.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
  else
    REQUIRE(MPIX_Precv_init(buf.data(), 1, 4, MPI_INT, sc.peer, 1, sc.comm, MPI_INFO_NULL, &req) ==
            MPI_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    // Round 0: enqueued start, host wait. Round 1: host start, enqueued wait. Round 2: both
    // enqueued, then a host MPIX_Start after synchronising the stream.
    if (round == 1) REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    else REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
    if (sender) {
      for (int i = 0; i < 4; ++i) buf[i] = round * 10 + i;
      REQUIRE(MPIX_Pready_range(0, 3, req) == MPI_SUCCESS);
    }
    if (round == 0) {
      REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Pwait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    }
    if (!sender)
      for (int i = 0; i < 4; ++i) CHECK(buf[i] == round * 10 + i);
  }
  REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);  // the stream passed the enqueued wait
  if (sender) REQUIRE(MPIX_Pready_range(0, 3, req) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
}

namespace {
// Blocks a host stream until released, so the test controls when an enqueued wait is reached.
struct Gate {
  std::atomic<int> open{0};
};
void gate_fn(void *a) {
  auto *g = static_cast<Gate *>(a);
  while (!g->open.load()) {
  }
}
}  // namespace

TEST_CASE("a host start before the stream reached an enqueued wait is refused",
          "[partitioned][enqueue][errors]") {
  HostStreamComm sc;
  int x = 0;
  MPIX_Request req;
  // To MPI_PROC_NULL: every round completes as soon as it starts.
  REQUIRE(MPIX_Psend_init(&x, 1, 1, MPI_INT, MPI_PROC_NULL, 0, sc.comm, MPI_INFO_NULL, &req) ==
          MPI_SUCCESS);
  Gate gate;
  REQUIRE(mpix_host_stream_launch(sc.hs, gate_fn, &gate) == 0);
  REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
  REQUIRE(MPIX_Pwait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Start(&req)) == MPI_ERR_REQUEST);
  // Freeing is fine: the request lives on until the stream has passed its wait.
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
  gate.open.store(1);
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
}

TEST_CASE("device-side misuse is reported by the host calls", "[partitioned][device][errors]") {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int sbuf[4] = {1, 2, 3, 4}, rbuf[4] = {0};
  MPIX_Request s, r;  // a pair to this process itself
  REQUIRE(MPIX_Psend_init(sbuf, 4, 1, MPI_INT, rank, 7, comm, MPI_INFO_NULL, &s) == MPI_SUCCESS);
  REQUIRE(MPIX_Precv_init(rbuf, 4, 1, MPI_INT, rank, 7, comm, MPI_INFO_NULL, &r) == MPI_SUCCESS);
  MPIX_Prequest ps, pr;
  REQUIRE(MPIX_Prequest_create(s, &ps) == MPI_SUCCESS);
  REQUIRE(MPIX_Prequest_create(r, &pr) == MPI_SUCCESS);
  int flag = 0;

  SECTION("inactive, wrong side, out of range, twice: reported once the round completes") {
    CHECK(MPIX_Pready(0, ps) == MPI_ERR_REQUEST);  // not started: nothing marked
    REQUIRE(MPIX_Start(&s) == MPI_SUCCESS);
    REQUIRE(MPIX_Start(&r) == MPI_SUCCESS);
    CHECK(MPIX_Pready(0, pr) == MPI_ERR_REQUEST);           // a receive request
    CHECK(MPIX_Parrived(ps, 0, &flag) == MPI_ERR_REQUEST);  // a send request
    CHECK(flag == 1);                                       // never leaves a poller spinning
    CHECK(MPIX_Pready(4, ps) == MPI_ERR_ARG);
    CHECK(MPIX_Pready_range(2, 5, ps) == MPI_ERR_ARG);  // nothing of the range marked
    REQUIRE(MPIX_Pready(0, ps) == MPI_SUCCESS);
    CHECK(MPIX_Pready(0, ps) == MPI_ERR_ARG);  // twice
    REQUIRE(MPIX_Pready_range(1, 3, ps) == MPI_SUCCESS);
    for (int p = 0; p < 4; ++p) {
      flag = 0;
      while (!flag) REQUIRE(MPIX_Parrived(pr, p, &flag) == MPI_SUCCESS);
    }
    for (int i = 0; i < 4; ++i) CHECK(rbuf[i] == i + 1);
    // The first misuse of each request (inactive send, wrong-side receive) fails its round:
    // reported once by the wait, which leaves the request inactive.
    CHECK(err_class(MPIX_Wait(&s, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
    CHECK(err_class(MPIX_Wait(&r, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
    CHECK(MPIX_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);  // inactive, reported already
    CHECK(MPIX_Parrived(pr, 0, &flag) == MPI_SUCCESS);       // inactive, arrived last round
    CHECK(flag == 1);
    REQUIRE(MPIX_Request_free(&s) == MPI_SUCCESS);
    REQUIRE(MPIX_Request_free(&r) == MPI_SUCCESS);
  }
  SECTION("a misuse that stalls the round makes the host wait fail instead of hang") {
    REQUIRE(MPIX_Start(&s) == MPI_SUCCESS);  // the receive is never started
    // Time for the agent to make the round's messages (gated on partitions never marked), so
    // that abandoning the round fails them unfired, as a rule; either way nothing may be left.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(MPIX_Pready(99, ps) == MPI_ERR_ARG);
    CHECK(err_class(MPIX_Wait(&s, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);  // the round failed
    flag = 0;
    CHECK(MPIX_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);  // inactive now
    CHECK(flag == 1);
    REQUIRE(MPIX_Request_free(&s) == MPI_SUCCESS);
    CHECK(s == MPIX_REQUEST_NULL);
    REQUIRE(MPIX_Request_free(&r) == MPI_SUCCESS);
  }
  // The device requests outlive their requests; free them last.
  REQUIRE(MPIX_Prequest_free(&ps) == MPI_SUCCESS);
  REQUIRE(MPIX_Prequest_free(&pr) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Prequest_free(&ps)) == MPI_ERR_ARG);
  MPI_Comm_free(&comm);
}
