// GPU-direct without a device (issue 12, "in CI"): which pairs of ranks take the path
// (ipc_pair_refusal) and the receiver's mapping cache (IpcMapCache), against a fake backend
// that keeps CUDA's rule that an allocation is mapped at most once per process.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "gpu/ipc_exports.hpp"
#include "gpu/ipc_map_cache.hpp"
#include "providers/mpi/ipc_path.hpp"

using namespace mpix;

namespace {

// Behaves as CUDA IPC did on an H200 (bench/cuda/probe_ipc_remap.cu). A "handle" names a
// memory block of the sender (byte 0), where the allocation starts in it (byte 1), its size
// (byte 2) and which allocation it is (byte 3: the sender's allocator may put another one at the
// same place once the first is freed). The first open of a block maps the whole block, 64
// bytes, here; an allocation of a mapped block lies at its offset in that mapping. Opening a
// handle while another allocation that starts at the same place of the block is still mapped is
// refused as "in use" (cudaErrorAlreadyMapped).
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
  Status ipc_open(int device, const unsigned char (&handle)[64], void **base,
                  bool *in_use) override {
    (void)device;
    *in_use = false;
    if (refuse) return make_status(MPI_ERR_NO_MEM, "out of memory");
    const int block = handle[0], at = handle[1], size = handle[2], id = handle[3];
    auto held = allocs.find({block, at});
    if (held != allocs.end() && held->second.id != id) {
      *in_use = true;
      return make_status(MPI_ERR_OTHER, "already mapped");
    }
    if (!blocks.count(block)) {
      ++opens;
      blocks[block] = arena + 64 * static_cast<std::size_t>(opens);
    }
    Alloc &a = allocs[{block, at}];
    a.id = id;
    a.size = size;
    ++a.refs;
    *base = blocks[block] + at;
    return {};
  }
  Status ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) override {
    for (const auto &b : blocks)
      for (const auto &a : allocs)
        if (a.first.first == b.first && b.second + a.first.second == p) {
          *start = reinterpret_cast<uint64_t>(p);
          *size = static_cast<uint64_t>(a.second.size);
          return {};
        }
    return make_status(MPI_ERR_ARG, "not an opened allocation");
  }
  void ipc_close(int device, void *base) override {
    (void)device;
    ++closes;
    closed.push_back(base);
    for (auto it = allocs.begin(); it != allocs.end(); ++it)
      if (blocks[it->first.first] + it->first.second == base) {
        if (--it->second.refs == 0) allocs.erase(it);
        break;
      }
  }
  std::string describe() const override { return "fake"; }
  Status ipc_handle(uint64_t base, unsigned char (&handle)[64]) override {
    ++handles;
    std::memset(handle, 0, sizeof handle);
    std::memcpy(handle, &base, sizeof base);
    handle[8] = static_cast<unsigned char>(handles);
    return {};
  }

  struct Alloc {
    int id = 0, size = 0, refs = 0;
  };
  char arena[64 * 32] = {};
  std::map<int, char *> blocks;                 // block -> where it is mapped
  std::map<std::pair<int, int>, Alloc> allocs;  // (block, start) -> the allocation opened there
  std::vector<void *> closed;
  int opens = 0, closes = 0, handles = 0;
  bool refuse = false;
};

struct Handle {
  unsigned char b[64] = {};
  explicit Handle(int block, int at = 0, int size = 64, int id = 1) {
    b[0] = static_cast<unsigned char>(block);
    b[1] = static_cast<unsigned char>(at);
    b[2] = static_cast<unsigned char>(size);
    b[3] = static_cast<unsigned char>(id);
  }
};

IpcMapCache::Key key(uint64_t base, uint64_t id, const Handle &h, int64_t pid = 7,
                     uint64_t extent = 8) {
  return IpcMapCache::Key{1, pid, base, id, h.b, extent};
}

// A process @p pid of host 42 that wants GPU-direct.
IpcPeerInfo wanting_peer(int64_t pid) {
  IpcPeerInfo p;
  p.host = 42;
  p.pid = pid;
  p.wants = 1;
  return p;
}

}  // namespace

TEST_CASE("GPU-direct pairs: only two processes of one host, both wanting it, GPUs reachable",
          "[ipc]") {
  IpcPeerInfo me = wanting_peer(100), peer = wanting_peer(101);
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

// An announced send's receive waits on the GPU for the sender's kernels: never where either
// stream triggers by host functions (ipc_may_announce; sessions 33-34's hostfn hang).
TEST_CASE("GPU-direct sends are announced only between streams without host-function triggers",
          "[ipc]") {
  IpcPeerInfo me = wanting_peer(100), peer = wanting_peer(101);
  CHECK(ipc_may_announce(me, peer));
  IpcPeerInfo peer_fn = peer;
  peer_fn.host_functions = 1;
  CHECK_FALSE(ipc_may_announce(me, peer_fn));
  IpcPeerInfo me_fn = me;
  me_fn.host_functions = 1;
  CHECK_FALSE(ipc_may_announce(me_fn, peer));
  CHECK_FALSE(ipc_may_announce(me_fn, peer_fn));
  // GPU-direct itself is not refused for it: only the announcing.
  CHECK(ipc_pair_refusal(me_fn, peer_fn, true, false) == nullptr);
}

TEST_CASE("GPU-direct mapping cache: one mapping per allocation, re-made ones mapped anew",
          "[ipc]") {
  FakeIpcBackend be;
  char *a = nullptr, *b = nullptr;
  {
    IpcMapCache cache;
    const Handle h1(1, 0, 32);  // block 1, bytes [0, 32) of it
    REQUIRE(cache.map(key(0x1000, 11, h1), &be, 0, &a).is_ok());
    REQUIRE(cache.map(key(0x1000, 11, h1), &be, 0, &b).is_ok());
    CHECK(a == b);
    CHECK(be.opens == 1);

    SECTION("a freed allocation re-made at the same address in new memory is mapped anew") {
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1000, 12, Handle(2)), &be, 0, &c).is_ok());
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
      REQUIRE(cache.map(key(0x2000, 13, Handle(3)), &be, 0, &c).is_ok());
      REQUIRE(cache.map(key(0x1000, 11, Handle(4), 8), &be, 0, &d).is_ok());
      CHECK(c != a);
      CHECK(d != a);
      CHECK(d != c);
      CHECK(be.opens == 3);
    }
    SECTION("another allocation of a mapped block opens at its place in the block") {
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1020, 15, Handle(1, 32, 16)), &be, 0, &c).is_ok());
      CHECK(c == a + 32);
      CHECK(be.opens == 1);  // the block was mapped already
    }
    SECTION(
        "a freed allocation re-made at the same place of the same block (CUDA refuses it) "
        "is found in the mapping that holds that place") {
      // The sender freed the 32 bytes at 0x1000 and made 24 there (another allocation id):
      // opening it is refused while the old one is mapped, and the old mapping covers it.
      const Handle again(1, 0, 24, 2);
      char *c = nullptr;
      REQUIRE(cache.map(key(0x1000, 16, again, 7, 24), &be, 0, &c).is_ok());
      CHECK(c == a);
      CHECK(cache.retired() == 1);
      char *d = nullptr;  // cached now
      REQUIRE(cache.map(key(0x1000, 16, again, 7, 24), &be, 0, &d).is_ok());
      CHECK(d == a);
      // A message reaching past what the old mapping is known to cover is refused (the
      // sender stages sends from such buffers: ipc_sends_direct).
      char *f = nullptr;
      be.allocs[{1, 4}] = FakeIpcBackend::Alloc{9, 8, 1};
      CHECK_FALSE(cache.map(key(0x1004, 18, Handle(1, 4, 40, 4), 7, 40), &be, 0, &f).is_ok());
      be.allocs.erase({1, 4});
      // One that starts inside the freed allocation, at another place: found there too.
      char *e = nullptr;
      be.allocs[{1, 8}] = FakeIpcBackend::Alloc{9, 8, 1};  // CUDA would refuse it as in use
      REQUIRE(cache.map(key(0x1008, 17, Handle(1, 8, 8, 3)), &be, 0, &e).is_ok());
      CHECK(e == a + 8);
      CHECK(be.opens == 1);
      be.allocs.erase({1, 8});
    }
    SECTION("refused as in use, but no mapping of that sender covers it: an error, not cached") {
      be.allocs[{1, 40}] = FakeIpcBackend::Alloc{9, 8, 1};  // mapped outside the cache
      char *c = nullptr;
      CHECK_FALSE(cache.map(key(0x1028, 18, Handle(1, 40, 8, 3)), &be, 0, &c).is_ok());
      // Another process's allocation is never found in this sender's mappings.
      be.allocs[{1, 0}].id = 5;
      CHECK_FALSE(cache.map(key(0x1000, 19, Handle(1, 0, 8, 4), 8), &be, 0, &c).is_ok());
      be.allocs[{1, 0}].id = 1;
      be.allocs.erase({1, 40});
      REQUIRE(cache.map(key(0x1028, 18, Handle(1, 40, 8, 3)), &be, 0, &c).is_ok());
      CHECK(c == a + 40);
    }
    SECTION("any other refusal is an error, and is not cached") {
      be.refuse = true;
      char *c = nullptr;
      CHECK_FALSE(cache.map(key(0x3000, 14, Handle(9)), &be, 0, &c).is_ok());
      CHECK_FALSE(cache.map(key(0x1000, 20, Handle(1, 0, 8, 7)), &be, 0, &c).is_ok());
      be.refuse = false;
      REQUIRE(cache.map(key(0x3000, 14, Handle(9)), &be, 0, &c).is_ok());
      CHECK(c != nullptr);
    }
  }
  // The cache's end unmaps each mapping it opened exactly once.
  std::vector<void *> seen = be.closed;
  for (std::size_t i = 0; i < seen.size(); ++i)
    for (std::size_t k = i + 1; k < seen.size(); ++k) CHECK(seen[i] != seen[k]);
  CHECK(be.allocs.empty());
}

TEST_CASE("GPU-direct exports: a send buffer over a freed exported allocation is told apart",
          "[ipc]") {
  FakeIpcBackend be;
  IpcExports ex;  // the sender's registry
  unsigned char h[64];
  CHECK_FALSE(ex.overlaps_other(1000, 100, 1));  // nothing exported yet
  REQUIRE(ex.handle(1000, 100, 1, &be, h).is_ok());
  REQUIRE(ex.handle(1000, 100, 1, &be, h).is_ok());
  CHECK(be.handles == 1);                        // once per allocation
  CHECK_FALSE(ex.overlaps_other(1000, 100, 1));  // itself
  CHECK_FALSE(ex.overlaps_other(1100, 50, 2));   // right after it
  CHECK_FALSE(ex.overlaps_other(900, 100, 2));   // right before it
  CHECK(ex.overlaps_other(1000, 100, 2));        // re-made at the same place
  CHECK(ex.overlaps_other(1050, 10, 2));         // inside it
  CHECK(ex.overlaps_other(950, 100, 2));         // reaching into it from below
  CHECK(ex.overlaps_other(900, 400, 2));         // around it, larger (a grown buffer)
  // A bigger allocation exported far below: the backward scan still finds one that reaches up.
  REQUIRE(ex.handle(0, 2000, 3, &be, h).is_ok());
  CHECK(ex.overlaps_other(1500, 10, 4));
  CHECK_FALSE(ex.overlaps_other(5000, 10, 4));
  // Re-made at the same start: a new handle, and the old one's id is no longer its own.
  REQUIRE(ex.handle(1000, 100, 5, &be, h).is_ok());
  CHECK(be.handles == 3);
  CHECK(ex.overlaps_other(1000, 100, 1));
}
