// MPICH 4.2's stream API beyond the enqueue calls: multiplex stream communicators and the
// point-to-point calls between their stream indices, MPIX_Comm_get_stream on them, progress
// and progress threads, bad input (error classes, no hang), and plain MPI calls on a stream
// communicator that synchronise its stream first (a host stream made with
// mpix_sync_plain_calls = true stands in for a GPU stream, where that is the default).
// Pairs of ranks (0,1), (2,3), ...; an odd rank out only joins the collectives.
#include <chrono>
#include <climits>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// A host stream that mpix creates and owns (no "value" key), optionally with one info key.
MPIX_Stream owned_host_stream(const char *key = nullptr, const char *value = nullptr) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  if (key) MPI_Info_set(info, key, value);
  MPIX_Stream s = MPIX_STREAM_NULL;
  const int rc = MPIX_Stream_create(info, &s);
  MPI_Info_free(&info);
  REQUIRE(rc == MPI_SUCCESS);
  return s;
}

bool in_pair(int rank, int size) { return rank < size - size % 2; }

// The payload of the message from stream i of @p from to stream j.
int payload(int from, int i, int j) { return 10000 * from + 100 * i + j; }

// A host function that, when the stream runs it, receives one int from @p peer with @p tag on
// @p recv_comm and then sends @p value with tag @p tag + 1 to it on @p send_comm (from the
// stream's worker thread): it holds the stream until the peer has sent.
struct RecvThenSend {
  MPI_Comm recv_comm, send_comm;
  int peer, tag, value;
  std::atomic<bool> done{false};
  static void run(void *p) {
    auto *r = static_cast<RecvThenSend *>(p);
    int got = 0;
    MPI_Recv(&got, 1, MPI_INT, r->peer, r->tag, r->recv_comm, MPI_STATUS_IGNORE);
    MPI_Send(&r->value, 1, MPI_INT, r->peer, r->tag + 1, r->send_comm);
    r->done.store(true);
  }
};

// A host function that, when the stream runs it, waits for one int from @p peer on @p comm
// and then fills @p buf with @p value.
struct RecvThenFill {
  MPI_Comm comm;
  int peer, tag;
  int *buf;
  int n, value;
  static void run(void *p) {
    auto *r = static_cast<RecvThenFill *>(p);
    int x = 0;
    MPI_Recv(&x, 1, MPI_INT, r->peer, r->tag, r->comm, MPI_STATUS_IGNORE);
    for (int i = 0; i < r->n; ++i) r->buf[i] = r->value;
  }
};

}  // namespace

TEST_CASE("multiplex: a message from stream i to stream j matches only receives for (i, j)",
          "[multiplex]") {
  const int rank = world_rank(), size = world_size();
  // Even ranks have 3 streams, odd ranks 2; index 1 is MPIX_STREAM_NULL on every rank.
  const int nmine = 2 + (rank % 2 == 0 ? 1 : 0);
  std::vector<MPIX_Stream> streams(static_cast<std::size_t>(nmine), MPIX_STREAM_NULL);
  for (int i = 0; i < nmine; ++i)
    if (i != 1) streams[static_cast<std::size_t>(i)] = owned_host_stream();
  MPI_Comm mc = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, nmine, streams.data(), &mc) ==
          MPI_SUCCESS);
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    const int npeer = 2 + (peer % 2 == 0 ? 1 : 0);
    // Every pair (i mine, j the peer's), sent in reverse order, all with one tag, plus a second
    // message on pair (0, 0) with another tag.
    std::vector<int> out;
    for (int i = 0; i < nmine; ++i)
      for (int j = 0; j < npeer; ++j) out.push_back(payload(rank, i, j));
    std::vector<MPI_Request> reqs;
    int extra = payload(rank, 0, 0) + 50;
    for (int i = nmine - 1; i >= 0; --i)
      for (int j = npeer - 1; j >= 0; --j) {
        MPI_Request r;
        REQUIRE(MPIX_Stream_isend(&out[static_cast<std::size_t>(i * npeer + j)], 1, MPI_INT, peer,
                                  7, mc, i, j, &r) == MPI_SUCCESS);
        reqs.push_back(r);
      }
    MPI_Request r;
    REQUIRE(MPIX_Stream_isend(&extra, 1, MPI_INT, peer, 8, mc, 0, 0, &r) == MPI_SUCCESS);
    reqs.push_back(r);
    // Receive in forward order, with wildcards: each receive gets its pair's message only.
    for (int i = 0; i < npeer; ++i)
      for (int j = 0; j < nmine; ++j) {
        int got = -1;
        MPI_Status st;
        const int src = (i + j) % 2 ? MPI_ANY_SOURCE : peer;
        // On (0, 0) the tag-8 message first, by tag, then the tag-7 one with MPI_ANY_TAG.
        if (i == 0 && j == 0) {
          REQUIRE(MPIX_Stream_recv(&got, 1, MPI_INT, src, 8, mc, 0, 0, &st) == MPI_SUCCESS);
          CHECK(got == payload(peer, 0, 0) + 50);
        }
        REQUIRE(MPIX_Stream_recv(&got, 1, MPI_INT, src, MPI_ANY_TAG, mc, i, j, &st) == MPI_SUCCESS);
        CHECK(got == payload(peer, i, j));
        CHECK(st.MPI_TAG == 7);
        CHECK(st.MPI_SOURCE == peer);
      }
    std::vector<MPI_Status> sts(reqs.size());  // MPICH's MPI_STATUSES_IGNORE upsets GCC 12
    REQUIRE(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), sts.data()) == MPI_SUCCESS);
    // Blocking send and nonblocking receive on a pair of the peer's choosing.
    int x = rank + 1, y = -1;
    MPI_Request rr;
    REQUIRE(MPIX_Stream_irecv(&y, 1, MPI_INT, peer, 3, mc, npeer - 1, nmine - 1, &rr) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Stream_send(&x, 1, MPI_INT, peer, 3, mc, nmine - 1, npeer - 1) == MPI_SUCCESS);
    MPI_Status st;
    REQUIRE(MPI_Wait(&rr, &st) == MPI_SUCCESS);
    CHECK(y == peer + 1);
    CHECK(st.MPI_SOURCE == peer);
    // MPI_PROC_NULL: done at once.
    REQUIRE(MPIX_Stream_send(&x, 1, MPI_INT, MPI_PROC_NULL, 3, mc, 0, 0) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_recv(&y, 1, MPI_INT, MPI_PROC_NULL, 3, mc, 0, 0, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  }
  // Plain traffic on the multiplex communicator itself matches no stream pair.
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    int x = rank, y = -1, z = -1;
    MPI_Request r;
    REQUIRE(MPIX_Stream_irecv(&z, 1, MPI_INT, peer, 4, mc, 0, 0, &r) == MPI_SUCCESS);
    REQUIRE(MPI_Sendrecv(&x, 1, MPI_INT, peer, 4, &y, 1, MPI_INT, peer, 4, mc, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    CHECK(y == peer);
    CHECK(z == -1);  // the plain message did not land in the pair receive
    // Handshake: the peer sends on the pair only after this rank has looked at z.
    REQUIRE(MPI_Sendrecv(&x, 1, MPI_INT, peer, 5, &y, 1, MPI_INT, peer, 5, mc, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Stream_send(&x, 1, MPI_INT, peer, 4, mc, 0, 0) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(z == peer);
  }
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
  for (auto &s : streams)
    if (s != MPIX_STREAM_NULL) REQUIRE(MPIX_Stream_free(&s) == MPI_SUCCESS);
}

TEST_CASE("MPIX_Comm_get_stream on a multiplex communicator", "[multiplex]") {
  MPIX_Stream a = owned_host_stream(), b = owned_host_stream();
  MPIX_Stream arr[3] = {a, MPIX_STREAM_NULL, b};
  MPI_Comm mc = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 3, arr, &mc) == MPI_SUCCESS);
  MPIX_Stream got = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Comm_get_stream(mc, 0, &got) == MPI_SUCCESS);
  CHECK(got == a);
  got = a;
  REQUIRE(MPIX_Comm_get_stream(mc, 1, &got) == MPI_SUCCESS);
  CHECK(got == MPIX_STREAM_NULL);
  REQUIRE(MPIX_Comm_get_stream(mc, 2, &got) == MPI_SUCCESS);
  CHECK(got == b);
  CHECK(error_class(MPIX_Comm_get_stream(mc, 3, &got)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Comm_get_stream(mc, -1, &got)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Comm_get_stream(mc, 0, nullptr)) == MPI_ERR_ARG);
  // The communicator holds its streams.
  MPIX_Stream keep = a;
  CHECK(error_class(MPIX_Stream_free(&keep)) == MPI_ERR_OTHER);
  CHECK(keep == a);
  // A duplicate (MPI_Comm_dup or MPI_Comm_idup) keeps the streams, as in MPICH, and holds them.
  MPI_Comm dup = MPI_COMM_NULL, idup = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_dup(mc, &dup) == MPI_SUCCESS);
  MPI_Request req = MPI_REQUEST_NULL;
  REQUIRE(MPI_Comm_idup(mc, &idup, &req) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (MPI_Comm c : {dup, idup}) {
    for (int i = 0; i < 3; ++i) {
      got = i == 1 ? a : MPIX_STREAM_NULL;
      REQUIRE(MPIX_Comm_get_stream(c, i, &got) == MPI_SUCCESS);
      CHECK(got == arr[i]);
    }
    CHECK(error_class(MPIX_Comm_get_stream(c, 3, &got)) == MPI_ERR_ARG);
  }
  int x = 0;
  REQUIRE(MPIX_Stream_send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, dup, 0, 2) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
  keep = b;
  CHECK(error_class(MPIX_Stream_free(&keep)) == MPI_ERR_OTHER);  // the duplicates hold it
  REQUIRE(MPI_Comm_free(&dup) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&idup) == MPI_SUCCESS);
  // No stream at all: index 0 is MPIX_STREAM_NULL, as MPICH does.
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 0, nullptr, &mc) == MPI_SUCCESS);
  got = a;
  REQUIRE(MPIX_Comm_get_stream(mc, 0, &got) == MPI_SUCCESS);
  CHECK(got == MPIX_STREAM_NULL);
  CHECK(error_class(MPIX_Comm_get_stream(mc, 1, &got)) == MPI_ERR_ARG);
  REQUIRE(MPIX_Stream_send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, mc, 0, 0) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
  // Freed with the communicator gone.
  REQUIRE(MPIX_Stream_free(&a) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&b) == MPI_SUCCESS);
}

TEST_CASE("multiplex: a duplicate carries stream-pair traffic of its own", "[multiplex]") {
  const int rank = world_rank(), size = world_size();
  MPIX_Stream s[2] = {owned_host_stream(), owned_host_stream()};
  MPI_Comm mc = MPI_COMM_NULL, dup = MPI_COMM_NULL, idup = MPI_COMM_NULL, dupdup = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 2, s, &mc) == MPI_SUCCESS);
  MPI_Request req = MPI_REQUEST_NULL;
  REQUIRE(MPI_Comm_idup(mc, &idup, &req) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_dup(mc, &dup) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_dup(idup, &dupdup) == MPI_SUCCESS);  // a duplicate of a duplicate
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    MPI_Comm comms[4] = {mc, dup, idup, dupdup};
    // The same pair (1, 0) and tag on all four: each receive gets its own communicator's
    // message, though the four are sent in reverse order and received with wildcards.
    int out[4], in[4] = {-1, -1, -1, -1};
    MPI_Request reqs[4];
    for (int k = 3; k >= 0; --k) {
      out[k] = 1000 * rank + k;
      REQUIRE(MPIX_Stream_isend(&out[k], 1, MPI_INT, peer, 9, comms[k], 1, 0, &reqs[k]) ==
              MPI_SUCCESS);
    }
    for (int k = 0; k < 4; ++k) {
      MPI_Status st;
      REQUIRE(MPIX_Stream_recv(&in[k], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[k], 1, 0,
                               &st) == MPI_SUCCESS);
      CHECK(in[k] == 1000 * peer + k);
      CHECK(st.MPI_SOURCE == peer);
    }
    MPI_Status sts[4];
    REQUIRE(MPI_Waitall(4, reqs, sts) == MPI_SUCCESS);
  }
  for (MPI_Comm *c : {&dupdup, &idup, &mc, &dup}) REQUIRE(MPI_Comm_free(c) == MPI_SUCCESS);
  for (auto &x : s) REQUIRE(MPIX_Stream_free(&x) == MPI_SUCCESS);
}

TEST_CASE("MPIX_Stream_progress and progress threads", "[progress]") {
  const int rank = world_rank(), size = world_size();
  MPIX_Stream s = owned_host_stream();
  MPI_Comm mc = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &s, &mc) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_progress(MPIX_STREAM_NULL) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_progress(s) == MPI_SUCCESS);
  REQUIRE(MPIX_Start_progress_thread(s) == MPI_SUCCESS);
  REQUIRE(MPIX_Start_progress_thread(s) == MPI_SUCCESS);  // already running: no-op
  REQUIRE(MPIX_Start_progress_thread(MPIX_STREAM_NULL) == MPI_SUCCESS);
  // Traffic while the threads run.
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    std::vector<int> out(1000), in(1000, -1);
    for (int i = 0; i < 1000; ++i) out[static_cast<std::size_t>(i)] = rank * 7 + i;
    MPI_Request r;
    REQUIRE(MPIX_Stream_irecv(in.data(), 1000, MPI_INT, peer, 1, mc, 0, 0, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_send(out.data(), 1000, MPI_INT, peer, 1, mc, 0, 0) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 1000; ++i) REQUIRE(in[static_cast<std::size_t>(i)] == peer * 7 + i);
  }
  REQUIRE(MPIX_Stop_progress_thread(s) == MPI_SUCCESS);
  REQUIRE(MPIX_Stop_progress_thread(s) == MPI_SUCCESS);  // none running: no-op
  REQUIRE(MPIX_Stop_progress_thread(MPIX_STREAM_NULL) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&s) == MPI_SUCCESS);
  // A thread left running into MPI_Finalize: mpi_mpich_style.
}

TEST_CASE("bad input: error classes, on every rank, and nothing hangs", "[errors]") {
  const int rank = world_rank(), size = world_size();
  MPI_Comm mc = MPI_COMM_NULL;
  MPIX_Stream forged = reinterpret_cast<MPIX_Stream>(static_cast<uintptr_t>(0x5eed1234));
  MPIX_Stream freed = owned_host_stream();
  MPIX_Stream gone = freed;
  REQUIRE(MPIX_Stream_free(&freed) == MPI_SUCCESS);

  SECTION("create_multiplex: every rank passes a bad argument") {
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &forged, &mc)) ==
          MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &gone, &mc)) ==
          MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, -1, &forged, &mc)) ==
          MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 2, nullptr, &mc)) ==
          MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 0, nullptr, nullptr)) ==
          MPI_ERR_ARG);
    CHECK(mc == MPI_COMM_NULL);
    // A local check: no collective reached.
    CHECK(error_class(MPIX_Stream_comm_create_multiplex(MPI_COMM_NULL, 0, nullptr, &mc)) ==
          MPI_ERR_COMM);
  }
  SECTION("create_multiplex: one rank passes a null newcomm, the others good arguments") {
    MPI_Comm *out = rank == size - 1 ? nullptr : &mc;
    const int rc = MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 0, nullptr, out);
    CHECK(error_class(rc) == (rank == size - 1 ? MPI_ERR_ARG : MPI_ERR_OTHER));
    CHECK(mc == MPI_COMM_NULL);
  }
  SECTION("create_multiplex: one rank passes a destroyed stream, the others good ones") {
    MPIX_Stream good = owned_host_stream();
    MPIX_Stream mine = rank == 0 ? gone : good;
    const int rc = MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &mine, &mc);
    CHECK(error_class(rc) == (rank == 0 ? MPI_ERR_ARG : MPI_ERR_OTHER));
    CHECK(mc == MPI_COMM_NULL);
    REQUIRE(MPIX_Stream_free(&good) == MPI_SUCCESS);  // nothing kept it
  }
  SECTION("stream indices out of range, negative, on the wrong communicator") {
    MPIX_Stream s = owned_host_stream();
    MPIX_Stream two[2] = {s, MPIX_STREAM_NULL};
    const int n = rank % 2 == 0 ? 2 : 1;  // even ranks 2 streams, odd ranks 1
    REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, n, two, &mc) == MPI_SUCCESS);
    int x = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    const int peer = in_pair(rank, size) ? (rank ^ 1) : MPI_PROC_NULL;
    // Local index beyond this rank's streams.
    CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, 0, mc, n, 0)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_recv(&x, 1, MPI_INT, peer, 0, mc, 0, n, MPI_STATUS_IGNORE)) ==
          MPI_ERR_ARG);
    // Remote index beyond every rank's streams, and beyond the peer's.
    CHECK(error_class(MPIX_Stream_isend(&x, 1, MPI_INT, peer, 0, mc, 0, 5, &r)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, mc, 5, 0, &r)) ==
          MPI_ERR_ARG);
    if (peer != MPI_PROC_NULL && peer % 2 == 1)  // the peer has 1 stream, this rank 2
      CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, 0, mc, 0, 1)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, 0, mc, -1, 0)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_recv(&x, 1, MPI_INT, peer, 0, mc, 0, -2, MPI_STATUS_IGNORE)) ==
          MPI_ERR_ARG);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK(error_class(MPIX_Stream_isend(&x, 1, MPI_INT, peer, 0, mc, 0, 0, nullptr)) ==
          MPI_ERR_ARG);
    // Large-count names: counts beyond INT_MAX are refused.
    const MPI_Count big = static_cast<MPI_Count>(INT_MAX) + 1;
    CHECK(error_class(MPIX_Stream_send_c(&x, big, MPI_INT, peer, 0, mc, 0, 0)) == MPI_ERR_COUNT);
    CHECK(error_class(MPIX_Stream_irecv_c(&x, big, MPI_INT, peer, 0, mc, 0, 0, &r)) ==
          MPI_ERR_COUNT);
    CHECK(error_class(MPIX_Stream_recv_c(&x, 1, MPI_INT, peer, 0, mc, 0, 7, MPI_STATUS_IGNORE)) ==
          MPI_ERR_ARG);
    // Ordinary argument checks still apply.
    CHECK(error_class(MPIX_Stream_send(&x, -1, MPI_INT, peer, 0, mc, 0, 0)) == MPI_ERR_COUNT);
    CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, size + 3, 0, mc, 0, 0)) == MPI_ERR_RANK);
    CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, -5, mc, 0, 0)) == MPI_ERR_TAG);
    // Not a multiplex communicator.
    CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, 0, 0)) ==
          MPI_ERR_COMM);
    CHECK(error_class(MPIX_Stream_recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_NULL, 0, 0,
                                       MPI_STATUS_IGNORE)) == MPI_ERR_COMM);
    {
      HostStreamComm single;
      CHECK(error_class(MPIX_Stream_send(&x, 1, MPI_INT, peer, 0, single.comm, 0, 0)) ==
            MPI_ERR_COMM);
    }
    // The enqueue calls need a single-stream communicator.
    CHECK(error_class(MPIX_Send_enqueue(&x, 1, MPI_INT, peer, 0, mc)) == MPI_ERR_COMM);
    REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_free(&s) == MPI_SUCCESS);
  }
  SECTION("progress calls and get_stream with handles that are not streams") {
    CHECK(error_class(MPIX_Stream_progress(forged)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_progress(gone)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Start_progress_thread(forged)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Start_progress_thread(gone)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stop_progress_thread(forged)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stop_progress_thread(gone)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_synchronize(gone)) == MPI_ERR_ARG);
    CHECK(error_class(MPIX_Stream_comm_create(MPI_COMM_WORLD, forged, &mc)) == MPI_ERR_ARG);
    CHECK(mc == MPI_COMM_NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("plain MPI calls on a stream communicator synchronise the stream first", "[plain]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s(MPI_COMM_WORLD, "mpix_sync_plain_calls", "true");
  MPI_Comm side = MPI_COMM_NULL;  // carries what holds the stream
  REQUIRE(MPI_Comm_dup(MPI_COMM_WORLD, &side) == MPI_SUCCESS);
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    if (rank % 2 == 0) {
      // Stream: [receive tag 1 from the peer on side, then send tag 2 to it on the stream
      // communicator]. MPI_Send (tag 5) on the stream communicator waits for that, so the two
      // messages are ordered and, on one communicator, arrive in that order (non-overtaking).
      // Without the sync tag 5 would go first: the stream waits for the peer's tag 1.
      RecvThenSend hold{side, s.comm, peer, 1, 22};
      REQUIRE(mpix_host_stream_launch(s.hs, &RecvThenSend::run, &hold) == 0);
      int x = 55;
      REQUIRE(MPI_Send(&x, 1, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
      CHECK(hold.done.load());
    } else {
      int one = 1, y = 0;
      REQUIRE(MPI_Send(&one, 1, MPI_INT, peer, 1, side) == MPI_SUCCESS);
      MPI_Status st;
      REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, MPI_ANY_TAG, s.comm, &st) == MPI_SUCCESS);
      CHECK(st.MPI_TAG == 2);
      CHECK(y == 22);
      REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, MPI_ANY_TAG, s.comm, &st) == MPI_SUCCESS);
      CHECK(st.MPI_TAG == 5);
      CHECK(y == 55);
    }
  }
  // A collective: every rank's stream fills its send buffer once the peer has said so; the
  // allreduce on the stream communicator reads the buffers only after that.
  {
    const int n = 16;
    std::vector<int> buf(n, 0), sum(n, -1);
    const int peer = in_pair(rank, size) ? (rank ^ 1) : rank;
    RecvThenFill fill{side, peer, 9, buf.data(), n, rank + 1};
    REQUIRE(mpix_host_stream_launch(s.hs, &RecvThenFill::run, &fill) == 0);
    int go = 1;
    REQUIRE(MPI_Send(&go, 1, MPI_INT, peer, 9, side) == MPI_SUCCESS);
    REQUIRE(MPI_Allreduce(buf.data(), sum.data(), n, MPI_INT, MPI_SUM, s.comm) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) REQUIRE(sum[static_cast<std::size_t>(i)] == size * (size + 1) / 2);
  }
  REQUIRE(MPI_Comm_free(&side) == MPI_SUCCESS);
}

TEST_CASE("MPI_Comm_free after MPIX_Wait_enqueue on a stream that syncs plain calls succeeds",
          "[plain]") {
  // As MPICH orders it on a GPU-stream communicator (MPICH's own stream test frees the
  // communicator right after enqueuing a wait): the free waits for the stream to pass the wait,
  // instead of failing with MPI_ERR_PENDING because the op has not completed yet.
  const int rank = world_rank(), size = world_size();
  HostStreamComm s(MPI_COMM_WORLD, "mpix_sync_plain_calls", "true");
  MPI_Comm side = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_dup(MPI_COMM_WORLD, &side) == MPI_SUCCESS);
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    if (rank % 2 == 0) {
      int dummy = 0;
      RecvThenFill hold{side, peer, 3, &dummy, 0, 0};  // holds the stream until the peer's go
      REQUIRE(mpix_host_stream_launch(s.hs, &RecvThenFill::run, &hold) == 0);
      int x = 66;
      MPI_Request r = MPI_REQUEST_NULL;
      REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 6, s.comm, &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      int go = 0;  // the peer sends its go once this rank has enqueued everything
      REQUIRE(MPI_Recv(&go, 1, MPI_INT, peer, 4, side, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      REQUIRE(MPI_Comm_free(&s.comm) == MPI_SUCCESS);
      CHECK(s.comm == MPI_COMM_NULL);
    } else {
      int go = 1, y = -1;
      REQUIRE(MPI_Send(&go, 1, MPI_INT, peer, 4, side) == MPI_SUCCESS);
      // Released late, so that the peer's MPI_Comm_free meets a stream still held (without the
      // sync it would fail with MPI_ERR_PENDING).
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      REQUIRE(MPI_Send(&go, 1, MPI_INT, peer, 3, side) == MPI_SUCCESS);
      REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, 6, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(y == 66);
    }
  }
  REQUIRE(MPI_Comm_free(&side) == MPI_SUCCESS);
}

TEST_CASE("plain MPI calls on a default host-stream communicator do not wait for the stream",
          "[plain]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;  // mpix_sync_plain_calls defaults to false on host streams
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1;
    Gate gate;
    gate.launch(s.hs);
    REQUIRE(gate.wait_entered());
    // The stream is held; plain calls on its communicator still go through.
    int x = rank, y = -1;
    REQUIRE(MPI_Sendrecv(&x, 1, MPI_INT, peer, 1, &y, 1, MPI_INT, peer, 1, s.comm,
                         MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(y == peer);
    gate.release();
    s.sync();
    CHECK(!gate.timed_out());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MPIX_Stream_send on a stream that syncs plain calls runs after its stream work",
          "[multiplex][plain]") {
  const int rank = world_rank(), size = world_size();
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPIX_Stream s = MPIX_STREAM_NULL;
  REQUIRE(make_host_mpix_stream(hs, &s, "mpix_sync_plain_calls", "true") == MPI_SUCCESS);
  MPI_Comm mc = MPI_COMM_NULL, side = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &s, &mc) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_dup(MPI_COMM_WORLD, &side) == MPI_SUCCESS);
  if (in_pair(rank, size)) {
    const int peer = rank ^ 1, n = 32;
    std::vector<int> out(n, 0), in(n, -1);
    // The stream fills the send buffer once the peer has said so.
    RecvThenFill fill{side, peer, 3, out.data(), n, 100 + rank};
    REQUIRE(mpix_host_stream_launch(hs, &RecvThenFill::run, &fill) == 0);
    int go = 1;
    REQUIRE(MPI_Send(&go, 1, MPI_INT, peer, 3, side) == MPI_SUCCESS);
    MPI_Request r;
    REQUIRE(MPIX_Stream_irecv(in.data(), n, MPI_INT, peer, 0, mc, 0, 0, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_send(out.data(), n, MPI_INT, peer, 0, mc, 0, 0) == MPI_SUCCESS);
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) REQUIRE(in[static_cast<std::size_t>(i)] == 100 + peer);
  }
  REQUIRE(MPI_Comm_free(&side) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(s) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&s) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}
