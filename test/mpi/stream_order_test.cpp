// Stream order is real: an enqueued receive writes its buffer only once the stream reaches it
// and later stream work sees the data; an enqueued send reads its buffer only after the work
// enqueued before it has run.
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// Host function: holds the stream until a message from (source, tag) is waiting unmatched at
// this rank (so, had the receive been posted early, it would have taken it), then records the
// receive buffer.
struct ProbeThenSnapshot {
  MPI_Comm comm;
  int source, tag;
  const int *buf;
  int n;
  bool probed = false;
  std::vector<int> seen;

  static void run(void *p) {
    auto *s = static_cast<ProbeThenSnapshot *>(p);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int flag = 0;
    while (!flag && std::chrono::steady_clock::now() < deadline) {
      MPI_Iprobe(s->source, s->tag, s->comm, &flag, MPI_STATUS_IGNORE);
      if (!flag) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    s->probed = flag != 0;
    s->seen.assign(s->buf, s->buf + s->n);
  }
};

}  // namespace

TEST_CASE("a host function enqueued after Wait_enqueue sees the received data", "[order]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1, n = 256;
  std::vector<int> buf(n, -1);
  if (rank % 2 == 1) {
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(buf.data(), n, MPI_INT, peer, 1, s.comm, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    Snapshot after;
    after.launch(s.hs, buf.data(), n);
    // Blocking enqueued receive too.
    std::vector<int> buf2(n, -1);
    REQUIRE(MPIX_Recv_enqueue(buf2.data(), n, MPI_INT, peer, 2, s.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    Snapshot after2;
    after2.launch(s.hs, buf2.data(), n);
    // The sender starts only now, so the stream has been waiting for the data.
    MPI_Barrier(s.comm);
    s.sync();
    REQUIRE(after.taken.load());
    REQUIRE(after2.taken.load());
    for (int i = 0; i < n; ++i) {
      REQUIRE(after.seen[i] == i);
      REQUIRE(after2.seen[i] == 2 * i);
    }
  } else {
    MPI_Barrier(s.comm);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int i = 0; i < n; ++i) buf[i] = i;
    REQUIRE(MPIX_Send_enqueue(buf.data(), n, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
    std::vector<int> buf2(n);
    for (int i = 0; i < n; ++i) buf2[i] = 2 * i;
    REQUIRE(MPIX_Send_enqueue(buf2.data(), n, MPI_INT, peer, 2, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("a host function enqueued before Recv_enqueue still sees the old buffer", "[order]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1, n = 64;
  if (rank % 2 == 1) {
    std::vector<int> buf(n, -5);
    // Stream: [probe until the message is here, then snapshot buf] [receive into buf].
    ProbeThenSnapshot before{s.comm, peer, 3, buf.data(), n, false, {}};
    REQUIRE(mpix_host_stream_launch(s.hs, &ProbeThenSnapshot::run, &before) == 0);
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(buf.data(), n, MPI_INT, peer, 3, s.comm, &st) == MPI_SUCCESS);
    // The same with a nonblocking receive and a gate the host opens later.
    std::vector<int> buf2(n, -6);
    Gate gate;
    gate.launch(s.hs);
    Snapshot before2;
    before2.launch(s.hs, buf2.data(), n);
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(buf2.data(), n, MPI_INT, peer, 4, s.comm, &r) == MPI_SUCCESS);
    MPI_Barrier(s.comm);  // the sender has sent (eagerly) both messages
    // The message is here: the stream (held by the gate) has not posted the receive, so the
    // probe finds it unmatched.
    int flag = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!flag && std::chrono::steady_clock::now() < deadline)
      MPI_Iprobe(peer, 4, s.comm, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 1);
    CHECK(buf2[0] == -6);
    gate.release();
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    CHECK(before.probed);
    for (int i = 0; i < n; ++i) REQUIRE(before.seen[i] == -5);
    for (int i = 0; i < n; ++i) REQUIRE(buf[i] == 100 + i);
    CHECK(st.MPI_TAG == 3);
    for (int i = 0; i < n; ++i) REQUIRE(before2.seen[i] == -6);
    for (int i = 0; i < n; ++i) REQUIRE(buf2[i] == 200 + i);
  } else {
    std::vector<int> out(n), out2(n);
    for (int i = 0; i < n; ++i) out[i] = 100 + i, out2[i] = 200 + i;
    REQUIRE(MPI_Send(out.data(), n, MPI_INT, peer, 3, s.comm) == MPI_SUCCESS);
    REQUIRE(MPI_Send(out2.data(), n, MPI_INT, peer, 4, s.comm) == MPI_SUCCESS);
    MPI_Barrier(s.comm);
  }
}

TEST_CASE("the send buffer is read only after earlier stream work has run", "[order]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1, n = 128;
  if (rank % 2 == 0) {
    std::vector<int> buf(n, -1), buf2(n, -1);
    // Stream: [gate] [host fn writes payload] [send buf] [host fn writes payload2] [isend buf2]
    struct Fill {
      int *buf;
      int n, base;
      static void run(void *p) {
        auto *f = static_cast<Fill *>(p);
        for (int i = 0; i < f->n; ++i) f->buf[i] = f->base + i;
      }
    } fill{buf.data(), n, 1000}, fill2{buf2.data(), n, 2000};
    Gate gate;
    gate.launch(s.hs);
    REQUIRE(mpix_host_stream_launch(s.hs, &Fill::run, &fill) == 0);
    REQUIRE(MPIX_Send_enqueue(buf.data(), n, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
    REQUIRE(mpix_host_stream_launch(s.hs, &Fill::run, &fill2) == 0);
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(buf2.data(), n, MPI_INT, peer, 6, s.comm, &r) == MPI_SUCCESS);
    // Give a wrong implementation (one that posts at enqueue time) every chance to send -1s.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.release();
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    CHECK_FALSE(gate.timed_out());
  } else {
    std::vector<int> in(n, 0), in2(n, 0);
    REQUIRE(MPI_Recv(in.data(), n, MPI_INT, peer, 5, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPI_Recv(in2.data(), n, MPI_INT, peer, 6, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) {
      REQUIRE(in[i] == 1000 + i);
      REQUIRE(in2[i] == 2000 + i);
    }
  }
}

TEST_CASE("a blocking enqueued send holds later stream work until it completes", "[order]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  // A large send completes only once the receiver takes it (rendezvous), and the receiver
  // posts its receive only after seeing that the host function after the send has not run.
  const int n = 1 << 20;
  std::vector<int> buf(n, 3);
  if (rank % 2 == 0) {
    REQUIRE(MPIX_Send_enqueue(buf.data(), n, MPI_INT, peer, 8, s.comm) == MPI_SUCCESS);
    Snapshot after;
    int marker = 1;
    after.launch(s.hs, &marker, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    int ran_early = after.taken.load() ? 1 : 0;
    REQUIRE(MPI_Send(&ran_early, 1, MPI_INT, peer, 9, s.comm) == MPI_SUCCESS);
    s.sync();
    CHECK(ran_early == 0);
    CHECK(after.taken.load());
  } else {
    int ran_early = -1;
    REQUIRE(MPI_Recv(&ran_early, 1, MPI_INT, peer, 9, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    std::vector<int> in(n, 0);
    REQUIRE(MPI_Recv(in.data(), n, MPI_INT, peer, 8, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(in[n - 1] == 3);
  }
}
