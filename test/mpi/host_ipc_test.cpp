// The same-node GPU-direct protocol (providers/mpi/ipc_path.hpp) without a GPU: host streams,
// with MPIX_HOST_IPC=on, treat memory of gpu/host/host_ipc.hpp's allocator as device memory that
// the ranks map from each other (shared memory in CUDA IPC's place). So headers, matching,
// the receiving stream's and the agent's copies, answers, announced sends (MPIX_GPU_DIRECT_ANNOUNCE
// auto, the default, always and off: one CTest entry each) and failures run in CI: data, counts,
// sources, tags, truncation, zero bytes, offsets, re-made buffers, ANY_SOURCE over a GPU-direct and
// a plain sender, non-overtaking order, 1000 rounds without host synchronisation, a receive that
// fails after matching its header (core/fault.hpp's hook), partitioned requests' direct
// rounds (partitioned/direct_link.hpp) in stream order and from the host, an HPE-style queue,
// MPIX_Sendrecv_enqueue, a strided datatype (staged), mixed traffic both ways, a pipeline of
// blocking receives (gpu_pipeline's pattern, 8 B to 4 MiB), stream order
// (a send buffer read, a receive buffer written only once its stream gets there), and a send
// failing at its fire (announced: its receiver still goes on). Links
// mpix_internal (the allocator and the hook are internal).
#include "gpu/host/host_ipc.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "core/fault.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_device.h"
#include "mpix/mpix_host_stream.h"
#include "test_util.hpp"

using namespace mpix_test;

namespace {

// One allocation of stand-in device memory for the whole program, handed out as a stack
// (DevInts): buffers come from an allocation made once, as codes allocate theirs, so sends
// from them go as they are (one from memory where an allocation sent from before was freed is
// copied into a buffer of mpix's first, and never announced: the re-made buffers' test).
class Arena {
 public:
  static Arena &get() {
    static Arena a;
    return a;
  }
  int *take(std::size_t n) {
    const std::size_t at = top_;
    top_ += (n + 15) / 16 * 16;
    REQUIRE(top_ <= kInts);
    return base_ + at;
  }
  void give_back(const int *p) { top_ = static_cast<std::size_t>(p - base_); }

 private:
  static constexpr std::size_t kInts = std::size_t{8} << 20;  // 32 MiB
  Arena() : base_(static_cast<int *>(mpix::host_ipc_alloc(kInts * sizeof(int)))) {
    REQUIRE(base_ != nullptr);
  }
  int *base_;
  std::size_t top_ = 0;
};

// Stand-in device memory of @p n ints, from the arena (scoped: given back in reverse order).
class DevInts {
 public:
  explicit DevInts(std::size_t n) : n_(n), p_(Arena::get().take(n)) {}
  ~DevInts() { Arena::get().give_back(p_); }
  DevInts(const DevInts &) = delete;
  DevInts &operator=(const DevInts &) = delete;
  int *get() const { return p_; }
  std::size_t bytes() const { return n_ * sizeof(int); }
  void fill(int base) {
    for (std::size_t i = 0; i < n_; ++i) p_[i] = base + static_cast<int>(i);
  }

 private:
  std::size_t n_;
  int *p_;
};

// How many of the @p n ints at @p p differ from base + i.
std::size_t differ(const int *p, std::size_t n, int base) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += p[i] != base + static_cast<int>(i);
  return bad;
}

// Ranks 0 and 1 of MPI_COMM_WORLD, in a communicator of their own (collective over
// MPI_COMM_WORLD: the other ranks get none and skip the test).
class Pair {
 public:
  Pair() {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 2 ? 0 : MPI_UNDEFINED, world_rank(), &comm);
    if (comm != MPI_COMM_NULL) {
      int n = 0;
      MPI_Comm_size(comm, &n);
      if (n < 2) MPI_Comm_free(&comm);
    }
  }
  ~Pair() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  Pair(const Pair &) = delete;
  Pair &operator=(const Pair &) = delete;
  explicit operator bool() const { return comm != MPI_COMM_NULL; }
  MPI_Comm comm = MPI_COMM_NULL;
};

int count_of(const MPI_Status &st) {
  int c = -1;
  MPI_Get_count(&st, MPI_INT, &c);
  return c;
}

// Sizes around the eager limit (MPIX_GPU_DIRECT_EAGER_MAX, 4096 bytes: at most that stays
// staged) up to 1 MiB, in ints.
const std::size_t kSizes[] = {2, 1024, 1025, 16384, 262144};

}  // namespace

TEST_CASE("host IPC: messages arrive whole, copied by the stream, the agent or a host wait") {
  Pair pair;
  if (!pair) return;
  REQUIRE(mpix::host_ipc_on());
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const char *forms[] = {"the receiving stream copies", "the agent copies (host buffer)",
                         "the agent copies (host MPI_Wait)"};
  for (std::size_t n : kSizes) {
    for (int form = 0; form < 3; ++form) {
      INFO(n << " ints; " << forms[form]);
      const int base = static_cast<int>(n) * 10 + form;
      DevInts dev(n);
      MPI_Request r = MPI_REQUEST_NULL;
      MPI_Status st;
      if (world_rank() == 0) {
        dev.fill(base);
        REQUIRE(MPIX_Isend_enqueue(dev.get(), static_cast<int>(n), MPI_INT, peer, 5, sc.comm, &r) ==
                MPI_SUCCESS);
        REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
        sc.sync();
        CHECK(st.MPI_ERROR == MPI_SUCCESS);
      } else if (form == 1) {
        std::vector<int> host(n, -1);
        REQUIRE(MPIX_Irecv_enqueue(host.data(), static_cast<int>(n), MPI_INT, peer, 5, sc.comm,
                                   &r) == MPI_SUCCESS);
        REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
        sc.sync();
        CHECK(differ(host.data(), n, base) == 0);
      } else {
        std::memset(dev.get(), 0xff, dev.bytes());
        REQUIRE(MPIX_Irecv_enqueue(dev.get(), static_cast<int>(n), MPI_INT, peer, 5, sc.comm, &r) ==
                MPI_SUCCESS);
        if (form == 0) {
          REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
          sc.sync();
        } else {
          REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
        }
        CHECK(differ(dev.get(), n, base) == 0);
      }
      if (world_rank() == 1) {
        CHECK(count_of(st) == static_cast<int>(n));
        CHECK(st.MPI_SOURCE == peer);
        CHECK(st.MPI_TAG == 5);
      }
      MPI_Barrier(pair.comm);
    }
  }
}

TEST_CASE("host IPC: offsets into allocations, truncation, zero bytes, a longer receive") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  const int peer = 1 - world_rank();
  const std::size_t n = 40000;
  DevInts dev(n);
  if (world_rank() == 0) {
    dev.fill(0);
    // 5000 ints from offset 123; 20000 (truncated at the receiver); none; 3000.
    CHECK(MPIX_Send_enqueue(dev.get() + 123, 5000, MPI_INT, peer, 1, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Send_enqueue(dev.get(), 20000, MPI_INT, peer, 2, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Send_enqueue(dev.get(), 0, MPI_INT, peer, 3, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Send_enqueue(dev.get() + 7, 3000, MPI_INT, peer, 4, sc.comm) == MPI_SUCCESS);
    sc.sync();
  } else {
    std::memset(dev.get(), 0, dev.bytes());
    MPI_Request r[4];
    MPI_Status st[4];
    REQUIRE(MPIX_Irecv_enqueue(dev.get() + 1001, 5000, MPI_INT, peer, 1, sc.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(dev.get() + 10000, 10000, MPI_INT, peer, 2, sc.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(dev.get() + 30000, 10, MPI_INT, peer, 3, sc.comm, &r[2]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(dev.get() + 31000, 9000, MPI_INT, peer, 4, sc.comm, &r[3]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(4, r, st) == MPI_SUCCESS);
    sc.sync();
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
    CHECK(count_of(st[0]) == 5000);
    CHECK(differ(dev.get() + 1001, 5000, 123) == 0);
    CHECK(dev.get()[1000] == 0);
    CHECK(dev.get()[6001] == 0);
    // Truncated: the error, and nothing of the message written.
    CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_TRUNCATE);
    CHECK(dev.get()[10000] == 0);
    CHECK(count_of(st[2]) == 0);
    CHECK(count_of(st[3]) == 3000);
    CHECK(differ(dev.get() + 31000, 3000, 7) == 0);
    CHECK(dev.get()[34000] == 0);  // past the message: as it was
  }
  MPI_Barrier(pair.comm);
}

// Allocations of their own, freed after each round: the next one is likely at the same address.
TEST_CASE("host IPC: a buffer freed and re-made between sends is not sent stale") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const std::size_t n = 50000;
  for (int round = 0; round < 6; ++round) {
    INFO("round " << round);
    int *p = static_cast<int *>(mpix::host_ipc_alloc(n * sizeof(int)));
    REQUIRE(p != nullptr);
    MPI_Status st;
    if (world_rank() == 0) {
      for (std::size_t i = 0; i < n; ++i) p[i] = round * 1000 + static_cast<int>(i);
      REQUIRE(MPIX_Send_enqueue(p, static_cast<int>(n), MPI_INT, peer, round, sc.comm) ==
              MPI_SUCCESS);
      sc.sync();
    } else {
      REQUIRE(MPIX_Recv_enqueue(p, static_cast<int>(n), MPI_INT, peer, round, sc.comm, &st) ==
              MPI_SUCCESS);
      sc.sync();
      CHECK(differ(p, n, round * 1000) == 0);
    }
    mpix::host_ipc_free(p);
    MPI_Barrier(pair.comm);
  }
}

TEST_CASE("host IPC: order holds between a small and a GPU-direct send with one tag") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const std::size_t small = 4, large = 100000;
  DevInts a(small), b(large);
  MPI_Request r[2];
  MPI_Status st[2];
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    if (world_rank() == 0) {
      a.fill(round);
      b.fill(round + 500);
      REQUIRE(MPIX_Isend_enqueue(a.get(), static_cast<int>(small), MPI_INT, peer, 9, sc.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(b.get(), static_cast<int>(large), MPI_INT, peer, 9, sc.comm,
                                 &r[1]) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      sc.sync();
    } else {
      DevInts x(large), y(large);
      REQUIRE(MPIX_Irecv_enqueue(x.get(), static_cast<int>(large), MPI_INT, peer, 9, sc.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Irecv_enqueue(y.get(), static_cast<int>(large), MPI_INT, peer, 9, sc.comm,
                                 &r[1]) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      sc.sync();
      CHECK(count_of(st[0]) == static_cast<int>(small));
      CHECK(count_of(st[1]) == static_cast<int>(large));
      CHECK(differ(x.get(), small, round) == 0);
      CHECK(differ(y.get(), large, round + 500) == 0);
    }
    MPI_Barrier(pair.comm);
  }
}

// Rank 1 sends from stand-in device memory (GPU-direct), rank 2 from host memory (MPI's own
// path); rank 0 takes both with MPI_ANY_SOURCE into stand-in device memory.
TEST_CASE("host IPC: ANY_SOURCE over a GPU-direct and a plain sender") {
  if (world_size() < 3) return;
  MPI_Comm three = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 3 ? 0 : MPI_UNDEFINED, world_rank(), &three);
  if (three == MPI_COMM_NULL) return;
  {
    HostStreamComm sc(three);
    const std::size_t n = 30000;
    for (int round = 0; round < 4; ++round) {
      INFO("round " << round);
      if (world_rank() == 0) {
        DevInts x(n), y(n);
        MPI_Request r[2];
        MPI_Status st[2];
        REQUIRE(MPIX_Irecv_enqueue(x.get(), static_cast<int>(n), MPI_INT, MPI_ANY_SOURCE,
                                   MPI_ANY_TAG, sc.comm, &r[0]) == MPI_SUCCESS);
        REQUIRE(MPIX_Irecv_enqueue(y.get(), static_cast<int>(n), MPI_INT, MPI_ANY_SOURCE,
                                   MPI_ANY_TAG, sc.comm, &r[1]) == MPI_SUCCESS);
        REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
        sc.sync();
        CHECK(st[0].MPI_SOURCE + st[1].MPI_SOURCE == 3);  // one from each
        const DevInts *got[2] = {&x, &y};
        for (int k = 0; k < 2; ++k) {
          CHECK(st[k].MPI_TAG == st[k].MPI_SOURCE * 10 + round);
          CHECK(count_of(st[k]) == static_cast<int>(n));
          CHECK(differ(got[k]->get(), n, st[k].MPI_SOURCE * 100000 + round) == 0);
        }
      } else if (world_rank() == 1) {
        DevInts dev(n);
        dev.fill(100000 + round);
        REQUIRE(MPIX_Send_enqueue(dev.get(), static_cast<int>(n), MPI_INT, 0, 10 + round,
                                  sc.comm) == MPI_SUCCESS);
        sc.sync();
      } else {
        std::vector<int> host(n);
        for (std::size_t i = 0; i < n; ++i) host[i] = 200000 + round + static_cast<int>(i);
        REQUIRE(MPIX_Send_enqueue(host.data(), static_cast<int>(n), MPI_INT, 0, 20 + round,
                                  sc.comm) == MPI_SUCCESS);
        sc.sync();
      }
      MPI_Barrier(three);
    }
  }
  MPI_Comm_free(&three);
}

TEST_CASE("host IPC: 1000 rounds without host synchronisation, checked at the end") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const int rounds = 1000, slots = 8;
  const std::size_t n = 2048;  // 8 KiB: GPU-direct
  DevInts ring(n * slots);
  std::vector<MPI_Status> sts(static_cast<std::size_t>(rounds));
  for (int k = 0; k < rounds; ++k) {
    int *slot = ring.get() + static_cast<std::size_t>(k % slots) * n;
    MPI_Request r = MPI_REQUEST_NULL;
    if (world_rank() == 0) {
      // The stream writes the slot when it gets there (after the last send from it completed).
      struct Fill {
        int *p;
        std::size_t n;
        int base;
      };
      auto *f = new Fill{slot, n, k * 7};
      REQUIRE(mpix_host_stream_launch(
                  sc.hs,
                  [](void *v) {
                    auto *f = static_cast<Fill *>(v);
                    for (std::size_t i = 0; i < f->n; ++i) f->p[i] = f->base + static_cast<int>(i);
                    delete f;
                  },
                  f) == 0);
      REQUIRE(MPIX_Isend_enqueue(slot, static_cast<int>(n), MPI_INT, peer, k % 100, sc.comm, &r) ==
              MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Irecv_enqueue(slot, static_cast<int>(n), MPI_INT, peer, k % 100, sc.comm, &r) ==
              MPI_SUCCESS);
    }
    REQUIRE(MPIX_Wait_enqueue(&r, &sts[static_cast<std::size_t>(k)]) == MPI_SUCCESS);
    if (world_rank() == 1 && k % slots == slots - 1) {
      // Check the ring's last rounds in stream order, before the next receives overwrite it.
      struct Check {
        int *ring;
        std::size_t n;
        int slots, last;
        std::size_t *bad;
      };
      static std::size_t bad = 0;
      auto *c = new Check{ring.get(), n, slots, k, &bad};
      REQUIRE(mpix_host_stream_launch(
                  sc.hs,
                  [](void *v) {
                    auto *c = static_cast<Check *>(v);
                    for (int s = 0; s < c->slots; ++s) {
                      const int round = c->last - (c->slots - 1) + s;
                      *c->bad +=
                          differ(c->ring + static_cast<std::size_t>(s) * c->n, c->n, round * 7);
                    }
                    delete c;
                  },
                  c) == 0);
      if (k == rounds - 1) {
        sc.sync();
        CHECK(bad == 0);
      }
    }
  }
  sc.sync();
  if (world_rank() == 1)
    for (int k = 0; k < rounds; ++k) {
      CHECK(sts[static_cast<std::size_t>(k)].MPI_TAG == k % 100);
      CHECK(count_of(sts[static_cast<std::size_t>(k)]) == static_cast<int>(n));
    }
  MPI_Barrier(pair.comm);
}

// As gpu_pipeline on a GPU: the sender's stream fills a buffer, sends it (MPIX_Isend_enqueue)
// and waits for the send; the receiver's stream receives with the blocking MPIX_Recv_enqueue
// and checks; every round queued with no host synchronisation, one buffer size after another,
// each buffer made anew.
TEST_CASE("host IPC: a pipeline of blocking receives, 8 B to 4 MiB, checked on the stream") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  static std::atomic<std::size_t> bad{0}, checks{0};
  bad = 0;
  checks = 0;
  struct Job {
    int *p;
    std::size_t n;
    int base;
  };
  for (std::size_t n : {std::size_t{2}, std::size_t{250}, std::size_t{16384}, std::size_t{262144},
                        std::size_t{1} << 20}) {
    const int rounds = n >= (std::size_t{1} << 20) ? 20 : 200;
    DevInts buf(n);
    for (int k = 0; k < rounds; ++k) {
      const int base = k * 3 + static_cast<int>(n);
      if (world_rank() == 0) {
        REQUIRE(mpix_host_stream_launch(
                    sc.hs,
                    [](void *v) {
                      auto *j = static_cast<Job *>(v);
                      for (std::size_t i = 0; i < j->n; ++i)
                        j->p[i] = j->base + static_cast<int>(i);
                      delete j;
                    },
                    new Job{buf.get(), n, base}) == 0);
        MPI_Request r = MPI_REQUEST_NULL;
        REQUIRE(MPIX_Isend_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, k % 32768,
                                   sc.comm, &r) == MPI_SUCCESS);
        REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      } else {
        REQUIRE(MPIX_Recv_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, k % 32768, sc.comm,
                                  MPI_STATUS_IGNORE) == MPI_SUCCESS);
        REQUIRE(mpix_host_stream_launch(
                    sc.hs,
                    [](void *v) {
                      auto *j = static_cast<Job *>(v);
                      bad += differ(j->p, j->n, j->base);
                      ++checks;
                      delete j;
                    },
                    new Job{buf.get(), n, base}) == 0);
      }
    }
    sc.sync();
    if (world_rank() == 1) {
      INFO(n << " ints");
      CHECK(bad == 0);
      CHECK(checks == static_cast<std::size_t>(rounds));
    }
    bad = 0;
    checks = 0;
    MPI_Barrier(pair.comm);
  }
}

// The failure is injected as the receiving agent starts its copy (a receive into host memory,
// which the agent copies): the receive reports it, its sender still hears and completes, and
// the next message on the path arrives whole.
TEST_CASE("host IPC: a receive that fails after matching its header still releases the send") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  const int peer = 1 - world_rank();
  const std::size_t n = 20000;
  DevInts dev(n);
  std::vector<int> host(n);
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round << (round == 0 ? " (the receive fails)" : " (the path again)"));
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    if (world_rank() == 0) {
      dev.fill(round * 3);
      REQUIRE(MPIX_Isend_enqueue(dev.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      sc.sync();  // never returned before the receiver answered its failures
      CHECK(st.MPI_ERROR == MPI_SUCCESS);
    } else {
      if (round == 0) mpix::fault_arm_direct_recv(1);
      std::fill(host.begin(), host.end(), -1);
      REQUIRE(MPIX_Irecv_enqueue(host.data(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      sc.sync();
      if (round == 0) {
        CHECK(mpix::fault_direct_recv_fired());  // the message came GPU-direct
        mpix::fault_arm_direct_recv(0);
        CHECK(error_class(st.MPI_ERROR) == MPI_ERR_OTHER);
      } else {
        CHECK(st.MPI_ERROR == MPI_SUCCESS);
        CHECK(count_of(st) == static_cast<int>(n));
        CHECK(differ(host.data(), n, 3) == 0);
      }
    }
    MPI_Barrier(pair.comm);
  }
}

namespace {

constexpr int kParts = 8, kPer = 512;  // 8 partitions of 2 KiB

int pvalue(int round, int i) { return round * 100000 + i; }

// The sender's "kernel" for a round, a host function on its stream after MPIX_Start_enqueue,
// through mpix/mpix_device.h built for the host: writes each partition, out of order, and
// marks it ready.
struct Produce {
  int *buf;
  MPIX_Prequest preq;
  int round;
  std::atomic<int> *errors;
};
void produce(void *a) {
  auto *p = static_cast<Produce *>(a);
  for (int k = 0; k < kParts; ++k) {
    const int part = (k * 3 + p->round) % kParts;
    for (int i = part * kPer; i < (part + 1) * kPer; ++i) p->buf[i] = pvalue(p->round, i);
    if (MPIX_Pready(part, p->preq) != MPI_SUCCESS) p->errors->fetch_add(1);
  }
}

// The receiver's, a host function after MPIX_Pwait_enqueue: checks the round's data.
struct Consume {
  const int *buf;
  int round;
  std::atomic<int> *good, *bad;
};
void consume(void *a) {
  auto *c = static_cast<Consume *>(a);
  bool ok = true;
  for (int i = 0; i < kParts * kPer; ++i) ok &= c->buf[i] == pvalue(c->round, i);
  (ok ? c->good : c->bad)->fetch_add(1);
}

// The sender's writer for a round that knows nothing of mpix (MPIX_Pready_enqueue marks after
// it).
struct Fill {
  int *buf;
  int round;
};
void fill(void *a) {
  auto *f = static_cast<Fill *>(a);
  for (int i = 0; i < kParts * kPer; ++i) f->buf[i] = pvalue(f->round, i);
}

// The partitioned send (@p sender) or receive of kParts x kPer ints at @p buf.
void pinit(bool sender, int *buf, int peer, int tag, MPI_Comm comm, MPIX_Request *req) {
  if (sender)
    REQUIRE(MPIX_Psend_init(buf, kParts, kPer, MPI_INT, peer, tag, comm, MPI_INFO_NULL, req) ==
            MPI_SUCCESS);
  else
    REQUIRE(MPIX_Precv_init(buf, kParts, kPer, MPI_INT, peer, tag, comm, MPI_INFO_NULL, req) ==
            MPI_SUCCESS);
}

}  // namespace

// Partitioned requests on stand-in device buffers of a GPU-direct pair take direct rounds
// (docs/partitioned.md): 100 rounds started and completed in stream order, partitions marked
// by the device API from the sender's stream, no host step of mpix's; then 10 rounds driven by the
// host (MPIX_Start, MPIX_Pready_range, MPIX_Wait), each pushed once; then 100 rounds marked
// ready by the stream (MPIX_Pready_enqueue), again with no host step.
TEST_CASE("host IPC: partitioned rounds go direct, in stream order and from the host") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const bool sender = world_rank() == 0;
  DevInts buf(kParts * kPer);
  std::memset(buf.get(), 0xff, buf.bytes());
  MPIX_Request req;
  pinit(sender, buf.get(), peer, 4, sc.comm, &req);
  MPIX_Prequest preq = nullptr;
  if (sender) REQUIRE(MPIX_Prequest_create(req, &preq) == MPI_SUCCESS);
  const int rounds = 100, host_rounds = 10;
  std::atomic<int> errors{0}, good{0}, bad{0};
  std::vector<Produce> pargs(rounds);
  std::vector<Consume> cargs(rounds);
  for (int r = 0; r < rounds; ++r) {
    const auto k = static_cast<std::size_t>(r);
    REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
    if (sender) {
      pargs[k] = Produce{buf.get(), preq, r, &errors};
      REQUIRE(mpix_host_stream_launch(sc.hs, produce, &pargs[k]) == 0);
    }
    REQUIRE(MPIX_Pwait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (!sender) {
      cargs[k] = Consume{buf.get(), r, &good, &bad};
      REQUIRE(mpix_host_stream_launch(sc.hs, consume, &cargs[k]) == 0);
    }
  }
  sc.sync();
  CHECK(errors.load() == 0);
  CHECK(bad.load() == 0);
  if (!sender) CHECK(good.load() == rounds);
  int direct = -2;
  MPI_Count steps = -1;
  REQUIRE(MPIX_Request_get_path(req, &direct, &steps) == MPI_SUCCESS);
  CAPTURE(direct, steps);
  CHECK(direct == 1);
  CHECK(steps == 0);
  for (int r = rounds; r < rounds + host_rounds; ++r) {
    INFO("host round " << r);
    REQUIRE(MPIX_Start(&req) == MPI_SUCCESS);
    if (sender) {
      for (int i = 0; i < kParts * kPer; ++i) buf.get()[i] = pvalue(r, i);
      REQUIRE(MPIX_Pready_range(0, kParts - 1, req) == MPI_SUCCESS);
    }
    MPI_Status st;
    REQUIRE(MPIX_Wait(&req, &st) == MPI_SUCCESS);
    if (!sender) {
      std::size_t wrong = 0;
      for (int i = 0; i < kParts * kPer; ++i) wrong += buf.get()[i] != pvalue(r, i);
      CHECK(wrong == 0);
    }
  }
  REQUIRE(MPIX_Request_get_path(req, &direct, &steps) == MPI_SUCCESS);
  CHECK(direct == 1);
  if (sender) CHECK(steps == host_rounds);  // each host-driven round pushed once
  // A persistent send driven by the stream alone: a writer that knows nothing of mpix, the
  // partitions marked ready by the stream (MPIX_Pready_range_enqueue / MPIX_Pready_enqueue).
  // Still direct, and no host step more.
  const int first = rounds + host_rounds;
  const MPI_Count steps_before = steps;
  std::vector<Fill> fargs(rounds);
  good.store(0);
  for (int r = first; r < first + rounds; ++r) {
    const auto k = static_cast<std::size_t>(r - first);
    REQUIRE(MPIX_Start_enqueue(&req) == MPI_SUCCESS);
    if (sender) {
      fargs[k] = Fill{buf.get(), r};
      REQUIRE(mpix_host_stream_launch(sc.hs, fill, &fargs[k]) == 0);
      if (r % 2 == 0) {
        REQUIRE(MPIX_Pready_range_enqueue(0, kParts - 1, req) == MPI_SUCCESS);
      } else {
        for (int p = kParts - 1; p >= 0; --p) REQUIRE(MPIX_Pready_enqueue(p, req) == MPI_SUCCESS);
      }
    }
    REQUIRE(MPIX_Pwait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (!sender) {
      cargs[k] = Consume{buf.get(), r, &good, &bad};
      REQUIRE(mpix_host_stream_launch(sc.hs, consume, &cargs[k]) == 0);
    }
  }
  sc.sync();
  CHECK(bad.load() == 0);
  if (!sender) CHECK(good.load() == rounds);
  REQUIRE(MPIX_Request_get_path(req, &direct, &steps) == MPI_SUCCESS);
  CHECK(direct == 1);
  CHECK(steps == steps_before);
  if (sender) REQUIRE(MPIX_Prequest_free(&preq) == MPI_SUCCESS);
  REQUIRE(MPIX_Request_free(&req) == MPI_SUCCESS);
  MPI_Barrier(pair.comm);
}

// Around the GPU-direct path on stand-in device memory: an HPE-style queue on the stream
// communicator (its ops go GPU-direct too), MPIX_Sendrecv_enqueue, and a derived datatype (not
// a byte range: staged through host memory, from and into the stand-in device memory). Parts
// in a row, not SECTIONs: Catch re-runs a case per section, and Pair is made over every rank.
TEST_CASE("host IPC: a queue, MPIX_Sendrecv_enqueue and a strided datatype") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const std::size_t n = 30000;
  DevInts a(n), b(n);
  {  // an HPE-style queue on the stream communicator
    MPIX_Queue q;
    REQUIRE(MPIX_Create_queue(sc.comm, nullptr, &q) == MPI_SUCCESS);
    // The receive hook counted down, never reaching 0, by each GPU-direct receive the agent
    // copies in: the queue's messages go GPU-direct (partitioned.md says so).
    const int far = 1 << 30;
    mpix::fault_arm_direct_recv(far);
    for (int round = 0; round < 5; ++round) {
      a.fill(world_rank() * 1000 + round);
      std::memset(b.get(), 0, b.bytes());
      MPI_Request r[2];
      MPI_Status st[2];
      REQUIRE(MPIX_Enqueue_recv(b.get(), static_cast<int>(n), MPI_INT, peer, round, sc.comm, q,
                                &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Enqueue_send(a.get(), static_cast<int>(n), MPI_INT, peer, round, sc.comm, q,
                                &r[1]) == MPI_SUCCESS);
      REQUIRE(MPIX_Enqueue_start(q) == MPI_SUCCESS);
      REQUIRE(MPIX_Enqueue_wait(q) == MPI_SUCCESS);
      sc.sync();
      REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
      CHECK(count_of(st[0]) == static_cast<int>(n));
      CHECK(differ(b.get(), n, peer * 1000 + round) == 0);
    }
    const int left = mpix::g_fault_direct_recv_countdown.load();
    mpix::fault_arm_direct_recv(0);
    CHECK(left < far);
    REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  }
  {  // MPIX_Sendrecv_enqueue
    for (int round = 0; round < 5; ++round) {
      a.fill(world_rank() * 7000 + round);
      std::memset(b.get(), 0, b.bytes());
      MPI_Status st;
      REQUIRE(MPIX_Sendrecv_enqueue(a.get(), static_cast<int>(n), MPI_INT, peer, 6, b.get(),
                                    static_cast<int>(n), MPI_INT, peer, 6, sc.comm,
                                    &st) == MPI_SUCCESS);
      sc.sync();
      CHECK(count_of(st) == static_cast<int>(n));
      CHECK(differ(b.get(), n, peer * 7000 + round) == 0);
    }
  }
  {  // a strided datatype
    MPI_Datatype every_other;
    MPI_Type_vector(static_cast<int>(n / 2), 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    a.fill(world_rank() * 3000);
    std::memset(b.get(), 0, b.bytes());
    MPI_Status st;
    if (world_rank() == 0) {
      REQUIRE(MPIX_Send_enqueue(a.get(), 1, every_other, peer, 8, sc.comm) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(b.get(), 1, every_other, peer, 8, sc.comm, &st) == MPI_SUCCESS);
    }
    sc.sync();
    if (world_rank() == 1) {
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i)
        wrong += b.get()[i] != (i % 2 == 0 ? static_cast<int>(i) : 0);
      CHECK(wrong == 0);
    }
    MPI_Type_free(&every_other);
  }
  MPI_Barrier(pair.comm);
}

namespace {

// A small deterministic generator, so both ranks draw the same message plan.
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  uint32_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(s >> 33);
  }
};

}  // namespace

// Mixed traffic both ways at once, many rounds: sizes on both sides of the eager limit, send
// and receive buffers in stand-in device memory or host memory at random, tags from a few (so
// that messages with one tag must keep their order), receives completed by the stream or by a
// host MPI_Waitall at random, ANY_TAG now and then. Every message's data, count and tag checked.
TEST_CASE("host IPC: mixed traffic both ways, checked message by message") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int me = world_rank(), peer = 1 - me;
  const std::size_t sizes[] = {2, 1024, 1025, 4096, 16384, 75000};  // ints
  const int rounds = 40, per = 12;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    // Plans of both directions, drawn alike on both ranks.
    struct Msg {
      std::size_t n;
      int tag;
      bool dev_send, dev_recv, any_tag;
    };
    std::vector<Msg> plan[2];
    for (int dir = 0; dir < 2; ++dir) {
      Lcg g(static_cast<uint64_t>(round * 2 + dir + 1));
      for (int k = 0; k < per; ++k) {
        Msg m;
        m.n = sizes[g.next() % 6];
        m.tag = static_cast<int>(g.next() % 3);
        m.dev_send = g.next() % 4 != 0;
        m.dev_recv = g.next() % 4 != 0;
        m.any_tag = g.next() % 8 == 0;
        plan[dir].push_back(m);
      }
    }
    const std::vector<Msg> &out = plan[me], &in = plan[peer];
    const bool host_wait = Lcg(static_cast<uint64_t>(round + 1000)).next() % 3 == 0;
    std::size_t total = 0;
    for (const Msg &m : out) total += m.n;
    for (const Msg &m : in) total += m.n;
    DevInts dev(total);
    std::vector<int> host(total, -1);
    std::vector<int *> sbuf, rbuf;
    std::size_t at = 0;
    for (const Msg &m : out) {
      int *p = (m.dev_send ? dev.get() : host.data()) + at;
      for (std::size_t i = 0; i < m.n; ++i)
        p[i] = me * 1000000 + round * 1000 + static_cast<int>(i % 997) + m.tag;
      sbuf.push_back(p);
      at += m.n;
    }
    for (const Msg &m : in) {
      int *p = (m.dev_recv ? dev.get() : host.data()) + at;
      std::fill(p, p + m.n, -7);
      rbuf.push_back(p);
      at += m.n;
    }
    std::vector<MPI_Request> reqs(2 * per, MPI_REQUEST_NULL);
    std::vector<MPI_Status> sts(2 * per);
    for (int k = 0; k < per; ++k) {
      const Msg &m = in[static_cast<std::size_t>(k)];
      // Posted in the sender's order: each receive, ANY_TAG ones too, matches its own message
      // (messages from one sender match in order).
      REQUIRE(MPIX_Irecv_enqueue(rbuf[static_cast<std::size_t>(k)], static_cast<int>(m.n), MPI_INT,
                                 peer, m.any_tag ? MPI_ANY_TAG : m.tag, sc.comm,
                                 &reqs[static_cast<std::size_t>(k)]) == MPI_SUCCESS);
    }
    for (int k = 0; k < per; ++k) {
      const Msg &m = out[static_cast<std::size_t>(k)];
      REQUIRE(MPIX_Isend_enqueue(sbuf[static_cast<std::size_t>(k)], static_cast<int>(m.n), MPI_INT,
                                 peer, m.tag, sc.comm,
                                 &reqs[static_cast<std::size_t>(per + k)]) == MPI_SUCCESS);
    }
    if (host_wait) {
      REQUIRE(MPI_Waitall(2 * per, reqs.data(), sts.data()) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Waitall_enqueue(2 * per, reqs.data(), sts.data()) == MPI_SUCCESS);
      sc.sync();
    }
    for (int k = 0; k < per; ++k) {
      const Msg &m = in[static_cast<std::size_t>(k)];
      const MPI_Status &st = sts[static_cast<std::size_t>(k)];
      INFO("message " << k << ": " << m.n << " ints, tag " << m.tag);
      CHECK(count_of(st) == static_cast<int>(m.n));
      CHECK(st.MPI_TAG == m.tag);
      const int *p = rbuf[static_cast<std::size_t>(k)];
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < m.n; ++i)
        wrong += p[i] != peer * 1000000 + round * 1000 + static_cast<int>(i % 997) + m.tag;
      CHECK(wrong == 0);
    }
    MPI_Barrier(pair.comm);
  }
}

// Stream order on the GPU-direct path: a send buffer is read only once the sending stream
// reaches the send (announced or not: the receiver's copy waits for the sender's ready word),
// and a receive buffer is written only once the receiving stream reaches the receive. Each
// side's stream is held closed (Gate) across the other side's part.
TEST_CASE("host IPC: buffers are read and written only when their streams get there") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int peer = 1 - world_rank();
  const std::size_t n = 50000;
  DevInts buf(n);
  // Part 1: rank 0's stream is held before its send; it writes the data only after the send
  // was enqueued (the receiver has the header by then where sends are announced).
  if (world_rank() == 0) {
    buf.fill(-5);  // not the message
    Gate gate;
    gate.launch(sc.hs);
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, 1, sc.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(gate.wait_entered());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the receiver is waiting
    buf.fill(100);  // the message: written while the stream is still before the send
    gate.release();
    sc.sync();
  } else {
    std::memset(buf.get(), 0, buf.bytes());
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, 1, sc.comm, &st) ==
            MPI_SUCCESS);
    sc.sync();
    CHECK(count_of(st) == static_cast<int>(n));
    CHECK(differ(buf.get(), n, 100) == 0);
  }
  MPI_Barrier(pair.comm);
  // Part 2: rank 1's stream is held before its receive while rank 0's send is long under way.
  if (world_rank() == 0) {
    buf.fill(200);
    REQUIRE(MPIX_Send_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, 2, sc.comm) ==
            MPI_SUCCESS);
    sc.sync();
  } else {
    std::memset(buf.get(), 0, buf.bytes());
    Gate gate;
    gate.launch(sc.hs);
    MPI_Request r;
    MPI_Status st;
    REQUIRE(MPIX_Irecv_enqueue(buf.get(), static_cast<int>(n), MPI_INT, peer, 2, sc.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
    REQUIRE(gate.wait_entered());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the sender's header is in
    CHECK(differ(buf.get(), n, 0) == n - 1);  // untouched: all zero (only [0] matches 0 + 0)
    gate.release();
    sc.sync();
    CHECK(count_of(st) == static_cast<int>(n));
    CHECK(differ(buf.get(), n, 200) == 0);
  }
  MPI_Barrier(pair.comm);
}

// A send that fails as its agent fires it (core/fault.hpp's fire hook). Announced, its header
// reached the receiver before it failed: the sender then writes its ready word from the host,
// so that the receiver copies what the buffer holds and answers, instead of waiting for ever.
// Not announced, nothing of it reaches the receiver. Either way the next send with that tag
// arrives whole and the sender's request carries the failure.
TEST_CASE("host IPC: a send that fails at its fire leaves no receiver waiting") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  const int peer = 1 - world_rank();
  const char *env = std::getenv("MPIX_GPU_DIRECT_ANNOUNCE");
  // auto (the default) announces a fresh communicator's first send to a peer, always every one.
  const bool announced = !env || std::strcmp(env, "off") != 0;
  const std::size_t n = 20000;
  DevInts a(n), b(n);
  if (world_rank() == 0) {
    a.fill(300);
    b.fill(400);
    mpix::fault_arm_fire(1);
    MPI_Request r;
    MPI_Status st;
    REQUIRE(MPIX_Isend_enqueue(a.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
    sc.sync();
    mpix::fault_arm_fire(0);
    CHECK(error_class(st.MPI_ERROR) == MPI_ERR_OTHER);
    REQUIRE(MPIX_Send_enqueue(b.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm) ==
            MPI_SUCCESS);
    sc.sync();
  } else {
    MPI_Status st;
    if (announced) {
      std::memset(a.get(), 0, a.bytes());
      REQUIRE(MPIX_Recv_enqueue(a.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &st) ==
              MPI_SUCCESS);
      sc.sync();
      CHECK(count_of(st) == static_cast<int>(n));
      CHECK(differ(a.get(), n, 300) == 0);  // what the failed send's buffer held
    }
    REQUIRE(MPIX_Recv_enqueue(b.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &st) ==
            MPI_SUCCESS);
    sc.sync();
    CHECK(count_of(st) == static_cast<int>(n));
    CHECK(differ(b.get(), n, 400) == 0);
  }
  MPI_Barrier(pair.comm);
}

// Completion on the GPU (MPIX_GPU_DIRECT_COMPLETION=gpu: the gpucompletion variants; providers/mpi/
// ipc_path.hpp), here on host streams: a GPU-direct send's wait in MPIX_Waitall_enqueue goes on
// once the receiver's stream has copied the message (a word of the sender's it sets), not
// before. Part 1: the receiver's stream is held before its Waitall while the sender's stream
// rewrites the send buffer right after its own; the receiver must still get the message.
// Part 2: 200 rounds both ways, each stream rewriting its send buffer right after each Waitall
// and every tenth round holding its own copy back: every round's message arrives as sent.
TEST_CASE("host IPC: a send's stream goes on only once the receiver has copied") {
  Pair pair;
  if (!pair) return;
  HostStreamComm sc(pair.comm);
  const int me = world_rank();
  const int peer = 1 - me;
  const std::size_t n = 20000;  // 80,000 bytes: GPU-direct, announced under auto
  for (std::size_t len : {std::size_t{2000}, n}) {  // 8,000 bytes: not announced under auto
    INFO("ints " << len);
    DevInts sbuf(len), rbuf(len);
    struct Fill {
      int *p;
      std::size_t n;
      int base;
      static void run(void *a) {
        auto *f = static_cast<Fill *>(a);
        for (std::size_t i = 0; i < f->n; ++i) f->p[i] = f->base + static_cast<int>(i);
      }
    };
    // Part 1.
    MPI_Request r;
    if (me == 0) {
      sbuf.fill(300);
      REQUIRE(MPIX_Isend_enqueue(sbuf.get(), static_cast<int>(len), MPI_INT, peer, 4, sc.comm,
                                 &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(1, &r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      Fill garbage{sbuf.get(), len, -7};
      REQUIRE(mpix_host_stream_launch(sc.hs, &Fill::run, &garbage) == 0);
      sc.sync();
    } else {
      std::memset(rbuf.get(), 0, rbuf.bytes());
      Gate gate;
      gate.launch(sc.hs);
      REQUIRE(MPIX_Irecv_enqueue(rbuf.get(), static_cast<int>(len), MPI_INT, peer, 4, sc.comm,
                                 &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Waitall_enqueue(1, &r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      REQUIRE(gate.wait_entered());
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the header is in
      gate.release();
      sc.sync();
      CHECK(differ(rbuf.get(), len, 300) == 0);
    }
    MPI_Barrier(pair.comm);
    // Part 2.
    struct Check {
      const int *p;
      std::size_t n;
      int base;
      std::atomic<std::size_t> *bad;
      static void run(void *a) {
        auto *c = static_cast<Check *>(a);
        *c->bad += differ(c->p, c->n, c->base);
      }
    };
    struct Nap {
      static void run(void *) { std::this_thread::sleep_for(std::chrono::microseconds(500)); }
    };
    const int rounds = 200;
    std::vector<Fill> fills, rewrites;
    std::vector<Check> checks;
    fills.reserve(rounds);
    rewrites.reserve(rounds);
    checks.reserve(rounds);
    std::atomic<std::size_t> bad{0};
    for (int k = 0; k < rounds; ++k) {
      MPI_Request rr[2];
      fills.push_back(Fill{sbuf.get(), len, 1000 * k + me});
      REQUIRE(mpix_host_stream_launch(sc.hs, &Fill::run, &fills.back()) == 0);
      REQUIRE(MPIX_Irecv_enqueue(rbuf.get(), static_cast<int>(len), MPI_INT, peer, 5, sc.comm,
                                 &rr[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(sbuf.get(), static_cast<int>(len), MPI_INT, peer, 5, sc.comm,
                                 &rr[1]) == MPI_SUCCESS);
      if (k % 10 == 5 * me) REQUIRE(mpix_host_stream_launch(sc.hs, &Nap::run, nullptr) == 0);
      REQUIRE(MPIX_Waitall_enqueue(2, rr, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      rewrites.push_back(Fill{sbuf.get(), len, -1000 * k});  // the buffer reused at once
      REQUIRE(mpix_host_stream_launch(sc.hs, &Fill::run, &rewrites.back()) == 0);
      checks.push_back(Check{rbuf.get(), len, 1000 * k + peer, &bad});
      REQUIRE(mpix_host_stream_launch(sc.hs, &Check::run, &checks.back()) == 0);
    }
    sc.sync();
    CHECK(bad.load() == 0);
    MPI_Barrier(pair.comm);
  }
}
