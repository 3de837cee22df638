// Provider ofi (also run under the other providers' settings): what the deferred-work design
// must guarantee. Receives do not match or write before their stream reaches them, sends read
// their buffer only then, order holds across counter roll-over, streams do not wait on each
// other, communicators and their duplicates stay apart, and message sizes span 0 B .. 64 MiB.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "mpi/test_util.hpp"
#include "providers/ofi/ofi_select.hpp"

using namespace mpix_test;

namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPIX_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(MPIX_TEST_ASAN)
constexpr bool kLeakChecked = true;
#else
constexpr bool kLeakChecked = false;
#endif

bool paired() {
  const int rank = world_rank(), size = world_size();
  return rank < size - size % 2;  // pairs (0,1), (2,3), ...; an odd rank out sits out
}

}  // namespace

TEST_CASE("a receive behind its stream neither matches nor writes its buffer", "[ofi][order]") {
  HostStreamComm s;
  if (!paired()) return;
  // Small enough to travel eagerly everywhere (Open MPI's shared-memory eager limit is 4 KiB),
  // so the sender's completion does not depend on the gated receive.
  const int rank = world_rank(), peer = rank ^ 1, n = 64;
  if (rank % 2 == 0) {
    std::vector<int> first(n, -6), second(n, -7);
    Gate gate;
    gate.launch(s.hs);
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(first.data(), n, MPI_INT, peer, 4, s.comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(second.data(), n, MPI_INT, MPI_ANY_SOURCE, 4, s.comm, &r[1]) ==
            MPI_SUCCESS);
    MPI_Barrier(s.comm);  // the peer's first send has completed
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // and has had time to land
    int touched = 0;
    for (int i = 0; i < n; ++i) touched += first[i] != -6;
    CHECK(touched == 0);
    gate.release();
    MPI_Barrier(s.comm);  // only now the peer sends the second message
    MPI_Status st[2];
    REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
    s.sync();
    CHECK_FALSE(gate.timed_out());
    for (int i = 0; i < n; ++i) REQUIRE(first[i] == 100 + i);
    for (int i = 0; i < n; ++i) REQUIRE(second[i] == 200 + i);
    CHECK(st[1].MPI_SOURCE == peer);
    int count = -1;
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == n);
  } else {
    std::vector<int> out(n), out2(n);
    for (int i = 0; i < n; ++i) out[i] = 100 + i, out2[i] = 200 + i;
    REQUIRE(MPIX_Send_enqueue(out.data(), n, MPI_INT, peer, 4, s.comm) == MPI_SUCCESS);
    s.sync();
    MPI_Barrier(s.comm);
    MPI_Barrier(s.comm);
    REQUIRE(MPIX_Send_enqueue(out2.data(), n, MPI_INT, peer, 4, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("a send reads its buffer when the stream reaches it, derived datatypes too",
          "[ofi][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1, n = 256;
  // Every other int of a 2n-int buffer.
  MPI_Datatype strided;
  MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  if (rank % 2 == 0) {
    std::vector<int> flat(n, -1), sparse(2 * n, -1);
    struct Fill {
      int *buf;
      int n, stride, base;
      static void run(void *p) {
        auto *f = static_cast<Fill *>(p);
        for (int i = 0; i < f->n; ++i) f->buf[i * f->stride] = f->base + i;
      }
    } fill{flat.data(), n, 1, 1000}, fill2{sparse.data(), n, 2, 2000};
    Gate gate;
    gate.launch(s.hs);
    REQUIRE(mpix_host_stream_launch(s.hs, &Fill::run, &fill) == 0);
    REQUIRE(MPIX_Send_enqueue(flat.data(), n, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
    REQUIRE(mpix_host_stream_launch(s.hs, &Fill::run, &fill2) == 0);
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(sparse.data(), 1, strided, peer, 6, s.comm, &r) == MPI_SUCCESS);
    MPI_Type_free(&strided);  // the op keeps its own reference
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.release();
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> in(n, 0), in2(2 * n, -3);
    REQUIRE(MPIX_Recv_enqueue(in.data(), n, MPI_INT, peer, 5, s.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    MPI_Status st;
    // Received into the strided layout as well: packed on the wire, unpacked on arrival.
    REQUIRE(MPIX_Recv_enqueue(in2.data(), 1, strided, peer, 6, s.comm, &st) == MPI_SUCCESS);
    MPI_Type_free(&strided);
    s.sync();
    for (int i = 0; i < n; ++i) REQUIRE(in[i] == 1000 + i);
    for (int i = 0; i < n; ++i) {
      REQUIRE(in2[2 * i] == 2000 + i);
      REQUIRE(in2[2 * i + 1] == -3);  // the holes are left alone
    }
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n);
  }
}

TEST_CASE(
    "hundreds of ops per stream stay in order (counters roll over under "
    "MPIX_OFI_CNTR_START)",
    "[ofi][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  const int rounds = 60, burst = 5;  // 600 ops per rank
  std::vector<long> out(burst), in(burst);
  std::vector<MPI_Request> reqs(2 * burst);
  long bad = 0;
  const uint64_t opened_before = mpix::ofi_test_info().counters_opened;
  for (int round = 0; round < rounds; ++round) {
    // A burst of messages with one tag: non-overtaking order decides which lands where.
    for (int i = 0; i < burst; ++i) {
      in[i] = -1;
      out[i] = (static_cast<long>(rank) << 32) | (round * burst + i);
      REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_LONG, peer, round % 3, s.comm, &reqs[i]) ==
              MPI_SUCCESS);
    }
    for (int i = 0; i < burst; ++i)
      REQUIRE(MPIX_Isend_enqueue(&out[i], 1, MPI_LONG, peer, round % 3, s.comm, &reqs[burst + i]) ==
              MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2 * burst, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    s.sync();
    for (int i = 0; i < burst; ++i)
      bad += in[i] != ((static_cast<long>(peer) << 32) | (round * burst + i));
  }
  CHECK(bad == 0);
  // Native triggers: the stream went through fresh counters, one per MPIX_OFI_CNTR_OPS ops or
  // per the few thresholds left below sockets' limit (2^31 - 1) when counters start near it.
  const mpix::OfiTestInfo info = mpix::ofi_test_info();
  if (info.native) {
    auto env = [](const char *n, long dflt) {
      const char *v = std::getenv(n);
      return v ? std::atol(v) : dflt;
    };
    const long start = env("MPIX_OFI_CNTR_START", 0), per = env("MPIX_OFI_CNTR_OPS", 64);
    const long per_counter = std::min(per, 2147483647L - start);
    INFO("counters start at " << start << ", at most " << per_counter << " ops each");
    CHECK(info.counters_opened - opened_before >= static_cast<uint64_t>(600 / per_counter));
  }
}

TEST_CASE("many streams, each with its own counter: a held stream holds no other",
          "[ofi][streams]") {
  const int k = 6;
  std::vector<std::unique_ptr<HostStreamComm>> streams;
  for (int i = 0; i < k; ++i) streams.push_back(std::make_unique<HostStreamComm>());
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  std::vector<int> out(k), in(k, -1);
  const uint64_t opened_before = mpix::ofi_test_info().counters_opened;
  Gate gate;
  if (rank % 2 == 0) gate.launch(streams[0]->hs);  // stream 0 of the even rank is held
  for (int i = 0; i < k; ++i) {
    out[i] = rank * 100 + i;
    // The same tag everywhere: only the communicator tells the messages apart.
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_INT, peer, 9, streams[i]->comm, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&out[i], 1, MPI_INT, peer, 9, streams[i]->comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  // Streams 1..k-1 finish on both ranks while stream 0 is held.
  for (int i = 1; i < k; ++i) streams[i]->sync();
  for (int i = 1; i < k; ++i) CHECK(in[i] == peer * 100 + i);
  gate.release();
  streams[0]->sync();
  CHECK(in[0] == peer * 100);
  CHECK_FALSE(gate.timed_out());
  // Native triggers: every stream armed its ops on a counter of its own.
  const mpix::OfiTestInfo info = mpix::ofi_test_info();
  if (info.native) CHECK(info.counters_opened - opened_before >= static_cast<uint64_t>(k));
}

// libfabric 1.17's shm compared a new receive with already-arrived messages using a stale or
// empty ignore mask: wildcard receives never found them (the mpi_matching hang under shm), and
// an exact receive could take a message with another tag. Each phase makes messages arrive
// before their receives exist, or recycles wildcard receives first.
TEST_CASE("receives posted after their messages arrived match as MPI says, wildcards too",
          "[ofi][matching]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  const int ANY = MPI_ANY_SOURCE, ANYT = MPI_ANY_TAG;
  if (rank % 2 == 0) {
    // Pending until the end: keeps this rank's progress running, so that early messages are
    // taken in (into the unexpected-message queue) before their receives are posted.
    int last = -1;
    MPI_Request keep;
    REQUIRE(MPIX_Irecv_enqueue(&last, 1, MPI_INT, peer, 99, s.comm, &keep) == MPI_SUCCESS);
    auto receive_all = [&](const std::vector<std::pair<int, int>> &who, std::vector<int> &in,
                           std::vector<MPI_Status> &st) {
      std::vector<MPI_Request> r(who.size());
      for (std::size_t i = 0; i < who.size(); ++i)
        REQUIRE(MPIX_Irecv_enqueue(&in[i], 1, MPI_INT, who[i].first, who[i].second, s.comm,
                                   &r[i]) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(static_cast<int>(r.size()), r.data(), st.data()) == MPI_SUCCESS);
    };
    // 1. Wildcard receives posted before their messages (they leave recycled entries behind).
    {
      std::vector<int> in(4, -1);
      std::vector<MPI_Status> st(4);
      receive_all({{ANY, ANYT}, {peer, ANYT}, {ANY, 12}, {ANY, ANYT}}, in, st);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      MPI_Barrier(s.comm);
      s.sync();
      for (int i = 0; i < 4; ++i) CHECK(in[i] == 1000 + i);
    }
    // 2. Tags 7 then 5 arrive first; exact receives for 5, then 7.
    {
      std::vector<int> in(2, -1);
      std::vector<MPI_Status> st(2);
      Gate gate;
      gate.launch(s.hs);
      receive_all({{peer, 5}, {peer, 7}}, in, st);
      MPI_Barrier(s.comm);
      MPI_Barrier(s.comm);  // both sent
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      gate.release();
      s.sync();
      CHECK_FALSE(gate.timed_out());
      CHECK(in[0] == 555);
      CHECK(in[1] == 777);
    }
    // 3. Six messages (tags 20..25) arrive first; then receives that take them out of order
    // where their tags say so and in order otherwise.
    {
      std::vector<int> in(6, -1);
      std::vector<MPI_Status> st(6);
      Gate gate;
      gate.launch(s.hs);
      receive_all({{peer, 23}, {peer, ANYT}, {ANY, ANYT}, {ANY, 25}, {ANY, ANYT}, {peer, ANYT}}, in,
                  st);
      MPI_Barrier(s.comm);
      MPI_Barrier(s.comm);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      gate.release();
      s.sync();
      CHECK_FALSE(gate.timed_out());
      const int expect[6] = {3, 0, 1, 5, 2, 4};  // which message each receive gets
      for (int i = 0; i < 6; ++i) {
        INFO("receive " << i);
        CHECK(in[i] == 2000 + expect[i]);
        CHECK(st[i].MPI_TAG == 20 + expect[i]);
        CHECK(st[i].MPI_SOURCE == peer);
      }
    }
    MPI_Barrier(s.comm);
    REQUIRE(MPI_Wait(&keep, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(last == 99);
  } else {
    auto send_all = [&](const std::vector<std::pair<int, int>> &what) {
      for (const auto &tv : what)
        REQUIRE(MPIX_Send_enqueue(&tv.second, 1, MPI_INT, peer, tv.first, s.comm) == MPI_SUCCESS);
      s.sync();
    };
    MPI_Barrier(s.comm);
    send_all({{10, 1000}, {11, 1001}, {12, 1002}, {13, 1003}});
    MPI_Barrier(s.comm);
    send_all({{7, 777}, {5, 555}});
    MPI_Barrier(s.comm);
    MPI_Barrier(s.comm);
    send_all({{20, 2000}, {21, 2001}, {22, 2002}, {23, 2003}, {24, 2004}, {25, 2005}});
    MPI_Barrier(s.comm);
    MPI_Barrier(s.comm);
    send_all({{99, 99}});
  }
}

TEST_CASE("message sizes from 0 B to 64 MiB arrive intact", "[ofi][sizes]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  const std::size_t sizes[] = {0, 1, 7, 255, 256, 4096, 65537, 1 << 20, 16 << 20, 64 << 20};
  for (std::size_t n : sizes) {
    auto pattern = [n](int who, std::size_t i) {
      return static_cast<unsigned char>((i * 131 + n + who * 7) & 0xff);
    };
    std::vector<unsigned char> out(n), in(n + 1, 0xee);
    for (std::size_t i = 0; i < n; ++i) out[i] = pattern(rank, i);
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in.data(), static_cast<int>(n), MPI_BYTE, peer, 11, s.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.data(), static_cast<int>(n), MPI_BYTE, peer, 11, s.comm,
                               &r[1]) == MPI_SUCCESS);
    MPI_Status st[2];
    REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
    s.sync();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += in[i] != pattern(peer, i);
    INFO("size " << n);
    CHECK(bad == 0);
    CHECK(in[n] == 0xee);  // nothing written past the buffer
    int count = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    CHECK(count == static_cast<int>(n));
  }
}

// libfabric's tcp provider (1.17, under ofi_rxm) closes the connection after a truncated
// receive: the receiver sees FI_ETRUNC, but later messages between the pair fail with "Broken
// pipe" (seen here, with and without MPIX_OFI_ORDER=serialize). The check is skipped there so
// the rest of the suite can run.
static bool truncation_breaks_connection() {
  auto env = [](const char *n) {
    const char *v = std::getenv(n);
    return v ? v : "";
  };
  return !std::strcmp(env("MPIX_PROVIDER"), "ofi") && !std::strcmp(env("MPIX_OFI_PROVIDER"), "tcp");
}

TEST_CASE("a message longer than the receive buffer: MPI_ERR_TRUNCATE", "[ofi][errors]") {
  if (truncation_breaks_connection()) {
    WARN("skipped: libfabric tcp drops the connection after a truncated receive");
    return;
  }
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  std::vector<int> out(100, 1), in(50, 0);
  if (rank % 2 == 0) {
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(in.data(), 50, MPI_INT, peer, 12, s.comm, &r) == MPI_SUCCESS);
    MPI_Status st;
    int rc = MPI_Wait(&r, &st);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
  } else {
    REQUIRE(MPIX_Send_enqueue(out.data(), 100, MPI_INT, peer, 12, s.comm) == MPI_SUCCESS);
  }
  s.sync();
  // The stream and the communicator still carry messages.
  int x = rank, y = -1;
  MPI_Request r;
  REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, peer, 13, s.comm, &r) == MPI_SUCCESS);
  REQUIRE(MPIX_Send_enqueue(&x, 1, MPI_INT, peer, 13, s.comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  s.sync();
  CHECK(y == peer);
  // A large message (a rendezvous where mpix matches messages itself) truncated too.
  std::vector<int> big(40000, 3), half(20000, 0);
  if (rank % 2 == 0) {
    REQUIRE(MPIX_Irecv_enqueue(half.data(), 20000, MPI_INT, peer, 14, s.comm, &r) == MPI_SUCCESS);
    MPI_Status st;
    int rc = MPI_Wait(&r, &st);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
  } else {
    REQUIRE(MPIX_Send_enqueue(big.data(), 40000, MPI_INT, peer, 14, s.comm) == MPI_SUCCESS);
  }
  s.sync();
}

TEST_CASE("MPI_Comm_dup / idup of a stream communicator get their own context (ofi: up to 32)",
          "[ofi][comm]") {
  HostStreamComm s;
  MPI_Comm dup, idup;
  REQUIRE(MPI_Comm_dup(s.comm, &dup) == MPI_SUCCESS);
  MPI_Request ireq;
  REQUIRE(MPI_Comm_idup(s.comm, &idup, &ireq) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&ireq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (paired()) {
    const int rank = world_rank(), peer = rank ^ 1;
    // Same peer, same tag on three communicators, received in the opposite order.
    int a = rank * 10 + 1, b = rank * 10 + 2, c = rank * 10 + 3, ga = -1, gb = -1, gc = -1;
    REQUIRE(MPIX_Send_enqueue(&a, 1, MPI_INT, peer, 1, dup) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&b, 1, MPI_INT, peer, 1, idup) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&c, 1, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(&gc, 1, MPI_INT, peer, 1, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(&gb, 1, MPI_INT, peer, 1, idup, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(&ga, 1, MPI_INT, peer, 1, dup, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    CHECK(ga == peer * 10 + 1);
    CHECK(gb == peer * 10 + 2);
    CHECK(gc == peer * 10 + 3);
  }
  REQUIRE(MPI_Comm_free(&dup) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&idup) == MPI_SUCCESS);

  // Provider ofi: a communicator and its duplicates share a family of 32 context ids; the 32nd
  // live member is refused with an error (not a crash), and freed ids are taken again.
  const char *which = std::getenv("MPIX_PROVIDER");
  if (!which || std::strcmp(which, "ofi") != 0) return;
  if (kLeakChecked) {
    // Open MPI 4.1's ompi_attr_copy_all leaks the attribute record it allocated when a copy
    // callback fails, which is how the refused duplicate is refused: LeakSanitizer would
    // report Open MPI's 40 bytes. Checked in the unsanitized build.
    WARN("skipped under AddressSanitizer: Open MPI leaks on a refused MPI_Comm_dup");
    return;
  }
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
  std::vector<MPI_Comm> dups;
  for (int i = 0; i < 40; ++i) {
    MPI_Comm d;
    if (MPI_Comm_dup(s.comm, &d) != MPI_SUCCESS) break;
    dups.push_back(d);
  }
  CHECK(dups.size() == 31);
  for (MPI_Comm &d : dups) REQUIRE(MPI_Comm_free(&d) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_dup(s.comm, &dup) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&dup) == MPI_SUCCESS);
}

TEST_CASE("stream communicators made and freed 600 times: context ids are recycled",
          "[ofi][comm]") {
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPIX_Stream st = MPIX_STREAM_NULL;
  REQUIRE(make_host_mpix_stream(hs, &st) == MPI_SUCCESS);
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int i = 0; i < 600; ++i) {
    MPI_Comm c;
    REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, st, &c) == MPI_SUCCESS);
    if (i % 100 == 99) {
      int x = rank + i, y = -1;
      MPI_Request r;
      REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, prev, 0, c, &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Send_enqueue(&x, 1, MPI_INT, next, 0, c) == MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(st) == MPI_SUCCESS);
      REQUIRE(y == prev + i);
    }
    REQUIRE(MPI_Comm_free(&c) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Stream_free(&st) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}

TEST_CASE("point-to-point on a stream intercommunicator: ranks name the remote group",
          "[ofi][comm]") {
  const int rank = world_rank(), size = world_size();
  const int color = rank % 2;
  MPI_Comm local, inter;
  REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local) == MPI_SUCCESS);
  REQUIRE(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, &inter) == MPI_SUCCESS);
  {
    HostStreamComm s(inter);
    int me = -1, remote = 0;
    MPI_Comm_rank(s.comm, &me);
    MPI_Comm_remote_size(s.comm, &remote);
    const int peer = me;  // local rank i talks to remote rank i
    if (peer < remote) {
      int out = color * 1000 + me, in = -1;
      MPI_Request r;
      MPI_Status st;
      REQUIRE(MPIX_Irecv_enqueue(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, s.comm, &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Send_enqueue(&out, 1, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      s.sync();
      CHECK(in == (1 - color) * 1000 + peer);
      CHECK(st.MPI_SOURCE == peer);
    }
    (void)size;
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

TEST_CASE("ofi_test_info answers for provider ofi only, and says how it triggers", "[ofi]") {
  HostStreamComm s;
  auto env_is = [](const char *name, const char *value) {
    const char *v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
  };
  const mpix::OfiTestInfo info = mpix::ofi_test_info();
  if (env_is("MPIX_PROVIDER", "mpi")) {
    CHECK_FALSE(info.active);
    return;
  }
  REQUIRE(env_is("MPIX_PROVIDER", "ofi"));
  CHECK(info.active);
  if (env_is("MPIX_OFI_NATIVE_TRIGGER", "1")) CHECK(info.native);
  if (env_is("MPIX_OFI_NATIVE_TRIGGER", "0")) CHECK_FALSE(info.native);
}
