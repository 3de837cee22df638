// GPU-direct without a device (issue 12, "in CI"): which pairs of ranks take the path
// (ipc_pair_refusal) and the receiver's mapping cache (IpcMapCache), against a fake backend
// that keeps CUDA's rule that an allocation is mapped at most once per process.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "providers/mpi/ipc_map_cache.hpp"
#include "providers/mpi/ipc_path.hpp"

using namespace mpix;

namespace {

// Maps a "handle" (its first byte names the sender's memory block, its second where the
// allocation starts in the block) to a fake address: the whole block, 64 bytes, is mapped.
// Refuses a second open of a block that is still mapped, as CUDA does (cudaErrorAlreadyMapped).
class FakeIpcBackend : public Backend {
 public:
  StreamKind kind() const override { return StreamKind::cuda; }
  const char *name() const override { return "fake-ipc"; }
  Status open_stream(void *, TriggerMode, std::unique_ptr<ExecStream> *) override {
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "no streams");
  }
  MemKind classify(const void *) const override { return MemKind::host; }
  Status alloc_pinned(std::size_t, void **) override { return make_status(MPI_ERR_NO_MEM, "none"); }
  void free_pinned(void *) override {}
  Status ipc_open(int device, const unsigned char (&handle)[64], void **base) override {
    (void)device;
    const int memory = handle[0];
    if (mapped.count(memory)) return make_status(MPI_ERR_OTHER, "already mapped");
    ++opens;
    char *p = arena + 64 * static_cast<std::size_t>(opens);
    mapped[memory] = p;
    *base = p + handle[1];
    return {};
  }
  Status ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) override {
    const auto at = static_cast<std::size_t>(static_cast<const char *>(p) - arena);
    *start = reinterpret_cast<uint64_t>(arena + at / 64 * 64);
    *size = 64;
    return {};
  }
  void ipc_close(int device, void *base) override {
    (void)device;
    ++closes;
    closed.push_back(base);
    for (auto it = mapped.begin(); it != mapped.end(); ++it)
      if (it->second == base) {
        mapped.erase(it);
        break;
      }
  }
  std::string describe() const override { return "fake"; }

  char arena[64 * 32] = {};
  std::map<int, char *> mapped;  // memory -> where it is mapped
  std::vector<void *> closed;
  int opens = 0, closes = 0;
};

struct Handle {
  unsigned char b[64] = {};
  explicit Handle(int memory, int at = 0) {
    b[0] = static_cast<unsigned char>(memory);
    b[1] = static_cast<unsigned char>(at);
  }
};

IpcMapCache::Key key(uint64_t base, uint64_t id, const Handle &h, int64_t pid = 7,
                     uint64_t extent = 8) {
  return IpcMapCache::Key{1, pid, base, id, h.b, extent};
}

}  // namespace

TEST_CASE("GPU-direct pairs: only two processes of one host, both wanting it, GPUs reachable",
          "[ipc]") {
  IpcPeerInfo me, peer;
  me.host = peer.host = 42;
  me.pid = 100;
  peer.pid = 101;
  me.wants = peer.wants = 1;
  CHECK(ipc_pair_refusal(me, peer, true, false) == nullptr);
  CHECK(std::string(ipc_pair_refusal(me, peer, true, true)) == "itself");
  CHECK(std::string(ipc_pair_refusal(me, peer, false, false)).find("peer access") !=
        std::string::npos);
  IpcPeerInfo other = peer;
  other.host = 43;
  CHECK(std::string(ipc_pair_refusal(me, other, true, false)) == "another node");
  IpcPeerInfo off = peer;
  off.wants = 0;
  CHECK(std::string(ipc_pair_refusal(me, off, true, false)) == "GPU-direct is off at the peer");
  IpcPeerInfo me_off = me;
  me_off.wants = 0;
  CHECK(std::string(ipc_pair_refusal(me_off, peer, true, false)).find("off here") !=
        std::string::npos);
  IpcPeerInfo same = peer;
  same.pid = me.pid;
  CHECK(std::string(ipc_pair_refusal(me, same, true, false)) == "the same process");
}

TEST_CASE("GPU-direct mapping cache: one mapping per allocation, re-made ones mapped anew",
          "[ipc]") {
  FakeIpcBackend be;
  char *a = nullptr, *b = nullptr;
  {
    IpcMapCache cache;
    const Handle h1(1), h2(2), h3(3);
    REQUIRE(cache.map(key(0x1000, 11, h1), &be, 0, &a).is_ok());
    REQUIRE(cache.map(key(0x1000, 11, h1), &be, 0, &b).is_ok());
    CHECK(a == b);
    CHECK(be.opens == 1);

    SECTION("a freed allocation re-made at the same address is mapped anew; the old is kept") {
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1000, 12, h2), &be, 0, &c).is_ok());
      CHECK(c != a);
      CHECK(be.opens == 2);
      CHECK(be.closes == 0);  // never while the agent runs: unmapping waits for the device
      CHECK(cache.retired() == 1);
    }
    SECTION("the same memory handed out again (same handle, new id) reuses its mapping") {
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1000, 12, h1), &be, 0, &c).is_ok());
      CHECK(c == a);
      CHECK(be.opens == 1);
      char *d = nullptr;  // and once more, now under the new id
      REQUIRE(cache.map(key(0x1000, 12, h1), &be, 0, &d).is_ok());
      CHECK(d == a);
      CHECK(be.opens == 1);
    }
    SECTION("other addresses and other processes are other mappings") {
      char *c = nullptr, *d = nullptr;
      REQUIRE(cache.map(key(0x2000, 13, h3), &be, 0, &c).is_ok());
      REQUIRE(cache.map(key(0x1000, 11, h2, 8), &be, 0, &d).is_ok());
      CHECK(c != a);
      CHECK(d != a);
      CHECK(d != c);
      CHECK(be.opens == 3);
    }
    SECTION("another allocation of a mapped block is found inside that block's mapping") {
      // The sender's allocator put a second allocation 16 bytes into block 1 (at 0x1010):
      // opening it fails (the block is mapped), and the cache finds it in the first mapping.
      const Handle part(1, 16);
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1010, 15, part, 7, 48), &be, 0, &c).is_ok());
      CHECK(c == a + 16);
      CHECK(be.opens == 1);
      char *d = nullptr;  // cached now
      REQUIRE(cache.map(key(0x1010, 15, part, 7, 48), &be, 0, &d).is_ok());
      CHECK(d == a + 16);
      // Past the mapped block, or of another process: the refusal stands.
      const Handle far(1, 40);
      CHECK_FALSE(cache.map(key(0x1028, 16, far, 7, 32), &be, 0, &c).is_ok());
      const Handle other(1, 17);  // (a handle of another process has other bytes)
      CHECK_FALSE(cache.map(key(0x1010, 17, other, 8, 8), &be, 0, &c).is_ok());
      CHECK(be.opens == 1);
    }
    SECTION("a refused mapping is an error, and is not cached") {
      be.mapped[9] = be.arena;  // memory 9 is mapped already, outside the cache
      const Handle h9(9);
      char *c = nullptr;
      CHECK_FALSE(cache.map(key(0x3000, 14, h9), &be, 0, &c).is_ok());
      be.mapped.erase(9);
      REQUIRE(cache.map(key(0x3000, 14, h9), &be, 0, &c).is_ok());
      CHECK(c != nullptr);
    }
  }
  // The cache's end unmaps each mapping exactly once.
  CHECK(be.closes == be.opens);
  std::vector<void *> seen = be.closed;
  for (std::size_t i = 0; i < seen.size(); ++i)
    for (std::size_t k = i + 1; k < seen.size(); ++k) CHECK(seen[i] != seen[k]);
}
