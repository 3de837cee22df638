// MPIX_Queue on host streams, two ranks: FIFO per queue, start N fires exactly the ops enqueued
// before it, MPIX_Enqueue_wait covers only started ops, requests complete with MPI_Wait, several
// queues share a stream, and bad input gets MPI error classes.
#include <mpi.h>

#include <chrono>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

int rank_of(MPI_Comm c) {
  int r = -1;
  MPI_Comm_rank(c, &r);
  return r;
}

int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

// A host stream and a duplicate of MPI_COMM_WORLD (a plain communicator), freed at scope exit.
struct Fixture {
  mpix_host_stream_t hs = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1, peer = -1;
  Fixture() {
    REQUIRE(mpix_host_stream_create(&hs) == 0);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    rank = rank_of(comm);
    peer = rank ^ 1;
  }
  ~Fixture() {
    mpix_host_stream_synchronize(hs);
    MPI_Comm_free(&comm);
    mpix_host_stream_destroy(&hs);
  }
  void sync() { REQUIRE(mpix_host_stream_synchronize(hs) == 0); }
};

bool test_done(MPI_Request *r) {
  int flag = 0;
  REQUIRE(MPI_Test(r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  return flag != 0;
}

}  // namespace

TEST_CASE("interleaved sends and receives over several starts", "[queue]") {
  Fixture f;
  MPIX_Queue q;
  REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q) == MPI_SUCCESS);
  constexpr int kStarts = 6, kN = 257;
  std::vector<std::vector<int>> out(kStarts, std::vector<int>(kN)),
      in(kStarts, std::vector<int>(kN, -1));
  std::vector<MPI_Request> reqs;
  for (int s = 0; s < kStarts; ++s) {
    for (int i = 0; i < kN; ++i) out[s][i] = f.rank * 1000000 + s * 1000 + i;
    MPI_Request a, b;
    // Alternate the order of send and receive inside a start: FIFO order must not matter
    // for deadlock (both are posted when the start is reached).
    if (s % 2 == 0) {
      REQUIRE(MPIX_Enqueue_send(out[s].data(), kN, MPI_INT, f.peer, s, f.comm, q, &a) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Enqueue_recv(in[s].data(), kN, MPI_INT, f.peer, s, f.comm, q, &b) ==
              MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Enqueue_recv(in[s].data(), kN, MPI_INT, f.peer, s, f.comm, q, &b) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Enqueue_send(out[s].data(), kN, MPI_INT, f.peer, s, f.comm, q, &a) ==
              MPI_SUCCESS);
    }
    reqs.push_back(a);
    reqs.push_back(b);
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    if (s % 3 == 2) REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
  f.sync();
  // After the stream passed the wait, every request is complete: MPI_Test says so at once.
  for (auto &r : reqs) CHECK(test_done(&r));
  for (int s = 0; s < kStarts; ++s)
    for (int i = 0; i < kN; ++i) REQUIRE(in[s][i] == f.peer * 1000000 + s * 1000 + i);
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
}

// [plain-mpi]: the peer meets the enqueued ops with plain MPI calls (not run under provider ofi,
// whose messages plain MPI does not see).
TEST_CASE("a start fires exactly the ops enqueued before it; wait covers started ops only",
          "[queue][plain-mpi]") {
  Fixture f;
  if (f.rank == 0) {
    MPIX_Queue q;
    REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q) == MPI_SUCCESS);
    int a = -1, b = -1;
    MPI_Request ra, rb;
    REQUIRE(MPIX_Enqueue_recv(&a, 1, MPI_INT, f.peer, 1, f.comm, q, &ra) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_recv(&b, 1, MPI_INT, f.peer, 2, f.comm, q, &rb) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
    MPI_Barrier(f.comm);  // the peer has sent both messages
    f.sync();             // the stream passed the wait: the first receive is complete
    CHECK(a == 11);
    CHECK(test_done(&ra));
    // The second receive was enqueued after the start: never posted, buffer untouched.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(!test_done(&rb));
    CHECK(b == -1);
    REQUIRE(MPIX_Free_queue(q) == MPI_ERR_PENDING);  // rb is enqueued, not started
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
    f.sync();
    CHECK(b == 22);
    MPI_Status st;
    REQUIRE(MPI_Wait(&rb, &st) == MPI_SUCCESS);
    CHECK(st.MPI_TAG == 2);
    REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  } else {
    int a = 11, b = 22;
    MPI_Request r[2];
    MPI_Isend(&a, 1, MPI_INT, f.peer, 1, f.comm, &r[0]);
    MPI_Isend(&b, 1, MPI_INT, f.peer, 2, f.comm, &r[1]);
    MPI_Barrier(f.comm);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
}

TEST_CASE("an enqueued send is not posted before its start", "[queue][plain-mpi]") {
  Fixture f;
  int v = 0;
  if (f.rank == 0) {
    MPIX_Queue q;
    REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q) == MPI_SUCCESS);
    v = 1;
    MPI_Request s;
    REQUIRE(MPIX_Enqueue_send(&v, 1, MPI_INT, f.peer, 5, f.comm, q, &s) == MPI_SUCCESS);
    MPI_Barrier(f.comm);  // the peer's receive is posted
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int peer_done = 1;
    MPI_Recv(&peer_done, 1, MPI_INT, f.peer, 6, f.comm, MPI_STATUS_IGNORE);
    CHECK(peer_done == 0);  // nothing arrived without a start
    v = 2;                  // the send reads the buffer when its start is reached
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);  // host wait on a queue request
    f.sync();
    REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  } else {
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, f.peer, 5, f.comm, &r);
    MPI_Barrier(f.comm);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    MPI_Send(&flag, 1, MPI_INT, f.peer, 6, f.comm);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v == 2);
  }
}

TEST_CASE("host MPI_Wait on queue requests gives the status", "[queue]") {
  Fixture f;
  MPIX_Queue q;
  REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q) == MPI_SUCCESS);
  std::vector<double> out(1000, f.rank + 0.5), in(1000, -1);
  MPI_Request r[2];
  REQUIRE(MPIX_Enqueue_recv(in.data(), 1000, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, f.comm, q,
                            &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_send(out.data(), 700, MPI_DOUBLE, f.peer, 40 + f.rank, f.comm, q, &r[1]) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
  MPI_Status st[2];
  REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
  CHECK(st[0].MPI_SOURCE == f.peer);
  CHECK(st[0].MPI_TAG == 40 + f.peer);
  int n = -1;
  MPI_Get_count(&st[0], MPI_DOUBLE, &n);
  CHECK(n == 700);
  CHECK(in[699] == f.peer + 0.5);
  CHECK(in[700] == -1);
  // Nothing left to wait for: a wait with every op complete costs no stream wait.
  REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
  f.sync();
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
}

TEST_CASE("several queues on one stream start independently", "[queue]") {
  Fixture f;
  MPIX_Queue q1, q2;
  REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q1) == MPI_SUCCESS);
  REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q2) == MPI_SUCCESS);
  int s1 = 100 + f.rank, s2 = 200 + f.rank, r1 = -1, r2 = -1;
  MPI_Request q1r[2], q2r[2];
  REQUIRE(MPIX_Enqueue_send(&s1, 1, MPI_INT, f.peer, 1, f.comm, q1, &q1r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_recv(&r1, 1, MPI_INT, f.peer, 1, f.comm, q1, &q1r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_send(&s2, 1, MPI_INT, f.peer, 2, f.comm, q2, &q2r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_recv(&r2, 1, MPI_INT, f.peer, 2, f.comm, q2, &q2r[1]) == MPI_SUCCESS);
  // Only q2 is started: q2's ops complete, q1's stay armed.
  REQUIRE(MPIX_Enqueue_start(q2) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_wait(q2) == MPI_SUCCESS);
  f.sync();
  CHECK(r2 == 200 + f.peer);
  CHECK(r1 == -1);
  CHECK(!test_done(&q1r[1]));
  MPI_Barrier(f.comm);
  REQUIRE(MPIX_Enqueue_start(q1) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_wait(q1) == MPI_SUCCESS);
  f.sync();
  CHECK(r1 == 100 + f.peer);
  REQUIRE(MPI_Waitall(2, q1r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Waitall(2, q2r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPIX_Free_queue(q1) == MPI_SUCCESS);
  REQUIRE(MPIX_Free_queue(q2) == MPI_SUCCESS);
}

namespace {
struct SetValue {
  int *p;
  int v;
};
void set_value(void *arg) {
  auto *s = static_cast<SetValue *>(arg);
  *s->p = s->v;
}
}  // namespace

TEST_CASE("a queue on a stream communicator follows that stream's order", "[queue]") {
  mpix_host_stream_t hs;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  REQUIRE(MPIX_Info_set_hex(info, "value", &hs, sizeof hs) == MPI_SUCCESS);
  MPIX_Stream stream;
  REQUIRE(MPIX_Stream_create(info, &stream) == MPI_SUCCESS);
  MPI_Info_free(&info);
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS);
  int rank = rank_of(comm), peer = rank ^ 1;
  MPIX_Queue q;
  REQUIRE(MPIX_Create_queue(comm, nullptr, &q) == MPI_SUCCESS);  // rule 1: the comm's stream
  for (int it = 0; it < 20; ++it) {
    int out = -1, in = -1;
    MPI_Request r[2];
    REQUIRE(MPIX_Enqueue_send(&out, 1, MPI_INT, peer, it, comm, q, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_recv(&in, 1, MPI_INT, peer, it, comm, q, &r[1]) == MPI_SUCCESS);
    // Stream work before the start: the send must read the value it writes.
    SetValue sv{&out, rank * 100 + it};
    REQUIRE(mpix_host_stream_launch(hs, set_value, &sv) == 0);
    REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
    // Stream work after the wait sees the received data.
    int seen = -2;
    struct Copy {
      int *dst;
      const int *src;
    } cp{&seen, &in};
    REQUIRE(mpix_host_stream_launch(
                hs,
                [](void *a) {
                  auto *c = static_cast<Copy *>(a);
                  *c->dst = *c->src;
                },
                &cp) == 0);
    REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
    CHECK(seen == peer * 100 + it);
    REQUIRE(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&stream) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}

TEST_CASE("a NULL stream on a plain communicator gives the queue its own host stream", "[queue]") {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = rank_of(comm), peer = rank ^ 1;
  MPIX_Queue q;
  REQUIRE(MPIX_Create_queue(comm, nullptr, &q) == MPI_SUCCESS);
  int out = rank + 7, in = -1;
  MPI_Request r[2];
  REQUIRE(MPIX_Enqueue_send(&out, 1, MPI_INT, peer, 0, comm, q, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_recv(&in, 1, MPI_INT, peer, 0, comm, q, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
  REQUIRE(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(in == peer + 7);
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);  // drains and destroys its host stream
  MPI_Comm_free(&comm);
}

TEST_CASE("bad queue input gets MPI error classes", "[queue][errors]") {
  Fixture f;
  MPIX_Queue q = MPIX_QUEUE_NULL;
  CHECK(err_class(MPIX_Create_queue(MPI_COMM_NULL, f.hs, &q)) == MPI_ERR_COMM);
  CHECK(err_class(MPIX_Create_queue(f.comm, f.hs, nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Enqueue_start(MPIX_QUEUE_NULL)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Enqueue_wait(MPIX_QUEUE_NULL)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Free_queue(MPIX_QUEUE_NULL)) == MPI_ERR_ARG);
  // On a host-stream communicator a handle must be a live host stream (rule 3): a destroyed
  // one is refused, not dereferenced.
  {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "mpix_host_stream");
    REQUIRE(MPIX_Info_set_hex(info, "value", &f.hs, sizeof f.hs) == MPI_SUCCESS);
    MPIX_Stream stream;
    REQUIRE(MPIX_Stream_create(info, &stream) == MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Comm scomm;
    REQUIRE(MPIX_Stream_comm_create(f.comm, stream, &scomm) == MPI_SUCCESS);
    mpix_host_stream_t dead;
    REQUIRE(mpix_host_stream_create(&dead) == 0);
    mpix_host_stream_t stale = dead;
    REQUIRE(mpix_host_stream_destroy(&dead) == 0);
    CHECK(err_class(MPIX_Create_queue(scomm, stale, &q)) == MPI_ERR_ARG);
    MPIX_Queue ok;
    REQUIRE(MPIX_Create_queue(scomm, f.hs, &ok) == MPI_SUCCESS);
    REQUIRE(MPIX_Free_queue(ok) == MPI_SUCCESS);
    REQUIRE(MPI_Comm_free(&scomm) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_free(&stream) == MPI_SUCCESS);
  }

  REQUIRE(MPIX_Create_queue(f.comm, f.hs, &q) == MPI_SUCCESS);
  int x = 0;
  MPI_Request r;
  CHECK(err_class(MPIX_Enqueue_send(&x, 1, MPI_INT, f.peer, 0, f.comm, q, nullptr)) == MPI_ERR_ARG);
  CHECK(err_class(MPIX_Enqueue_send(&x, 1, MPI_INT, 99, 0, f.comm, q, &r)) == MPI_ERR_RANK);
  CHECK(err_class(MPIX_Enqueue_send(&x, -1, MPI_INT, f.peer, 0, f.comm, q, &r)) == MPI_ERR_COUNT);
  CHECK(err_class(MPIX_Enqueue_recv(&x, 1, MPI_INT, f.peer, -5, f.comm, q, &r)) == MPI_ERR_TAG);
  CHECK(err_class(MPIX_Enqueue_send(&x, 1, MPI_INT, f.peer, 0, f.comm, MPIX_QUEUE_NULL, &r)) ==
        MPI_ERR_ARG);
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  CHECK(err_class(MPIX_Free_queue(q)) == MPI_ERR_ARG);     // freed twice
  CHECK(err_class(MPIX_Enqueue_start(q)) == MPI_ERR_ARG);  // stale handle
}
