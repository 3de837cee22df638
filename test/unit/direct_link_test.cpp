// Direct partitioned rounds without a device (issue 12, "in CI"): which side qualifies, when
// a receiver declines an offer, and what its answer names and the sender maps, against a fake
// backend (partitioned/direct_link.hpp).
#include "partitioned/direct_link.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "gpu/backend.hpp"

using namespace mpix;

namespace {

DirectSide qualifying() {
  DirectSide s;
  s.setting_on = s.has_peer = s.pair_direct = s.cuda = s.device_memory = true;
  s.bytes = 4096;
  return s;
}

bool mentions(const char *why, const char *what) {
  return why && std::string(why).find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("direct rounds: a side qualifies only with everything in place", "[direct]") {
  CHECK(direct_side_refusal(qualifying()) == nullptr);
  DirectSide s = qualifying();
  s.setting_on = false;
  CHECK(mentions(direct_side_refusal(s), "MPIX_PARTITIONED_DIRECT=off"));
  s = qualifying();
  s.has_peer = false;
  CHECK(mentions(direct_side_refusal(s), "MPI_PROC_NULL"));
  s = qualifying();
  s.pair_direct = false;
  CHECK(mentions(direct_side_refusal(s), "GPU-direct pair"));
  s = qualifying();
  s.cuda = false;
  CHECK(mentions(direct_side_refusal(s), "cudaMalloc"));
  s = qualifying();
  s.device_memory = false;  // managed or host memory
  CHECK(mentions(direct_side_refusal(s), "cudaMalloc"));
  s = qualifying();
  s.bytes = 0;
  CHECK(mentions(direct_side_refusal(s), "no bytes"));
}

TEST_CASE("direct rounds: the receiver declines where its side does not qualify or sizes differ",
          "[direct]") {
  CHECK(direct_answer_refusal(nullptr, 4096, 4096) == nullptr);
  CHECK(mentions(direct_answer_refusal(nullptr, 4096, 8192), "differ in size"));
  CHECK(mentions(direct_answer_refusal(nullptr, 8192, 4096), "differ in size"));
  CHECK(mentions(direct_answer_refusal("its own reason", 4096, 4096), "its own reason"));
}

namespace {

// Device memory and CUDA IPC as one process sees its own and a peer's: allocations in `dev`
// (the receiver's), each exported by a handle naming its place; opening a handle maps the
// allocation at the same place of `view` (the sender's mapping). `mapped_short` makes the
// mapping of an allocation this many bytes shorter than the allocation (CUDA's partial map of
// one made where a freed one lay).
class FakeDirectBackend : public Backend {
 public:
  StreamKind kind() const override { return StreamKind::cuda; }
  const char *name() const override { return "fake-direct"; }
  Status open_stream(void *, TriggerMode, std::unique_ptr<ExecStream> *) override {
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "no streams");
  }
  MemKind classify(const void *) const override { return MemKind::device; }
  Status alloc_pinned(std::size_t, void **) override { return make_status(MPI_ERR_NO_MEM, "none"); }
  void free_pinned(void *) override {}
  std::string describe() const override { return "fake"; }

  Status alloc_device(int, std::size_t bytes, void **p) override {
    if (used + bytes > sizeof dev) return make_status(MPI_ERR_NO_MEM, "arena full");
    allocs.push_back({used, bytes});
    *p = dev + used;
    used += (bytes + 255) / 256 * 256;
    return {};
  }
  Status copy_sync(void *dst, const void *src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return {};
  }
  Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *id) override {
    const auto at = static_cast<std::size_t>(static_cast<const char *>(p) - dev);
    for (std::size_t i = 0; i < allocs.size(); ++i)
      if (at >= allocs[i].first && at < allocs[i].first + allocs[i].second) {
        *base = reinterpret_cast<uint64_t>(dev + allocs[i].first);
        *size = allocs[i].second;
        *id = 100 + i;
        return {};
      }
    return make_status(MPI_ERR_ARG, "not device memory");
  }
  Status ipc_handle(uint64_t base, unsigned char (&h)[64]) override {
    std::memset(h, 0, sizeof h);
    const uint64_t at = base - reinterpret_cast<uint64_t>(dev);
    std::memcpy(h, &at, sizeof at);
    return {};
  }
  Status ipc_open(int, const unsigned char (&h)[64], void **base, bool *in_use) override {
    *in_use = false;
    uint64_t at = 0;
    std::memcpy(&at, h, sizeof at);
    *base = view + at;
    return {};
  }
  Status ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) override {
    const auto at = static_cast<std::size_t>(static_cast<const char *>(p) - view);
    for (const auto &a : allocs)
      if (at >= a.first && at < a.first + a.second) {
        *start = reinterpret_cast<uint64_t>(view + a.first);
        *size = a.second - mapped_short;
        return {};
      }
    return make_status(MPI_ERR_ARG, "not mapped");
  }
  void ipc_close(int, void *) override {}

  alignas(256) char dev[1 << 18] = {};
  alignas(256) char view[1 << 18] = {};
  std::vector<std::pair<std::size_t, std::size_t>> allocs;  // (offset, bytes)
  std::size_t used = 0;
  uint64_t mapped_short = 0;
};

}  // namespace

TEST_CASE(
    "direct rounds: the receiver's answer names its buffer and link words; the sender maps "
    "them where they are",
    "[direct]") {
  auto be = std::make_unique<FakeDirectBackend>();
  LinkSlot a, b;
  REQUIRE(link_slot_acquire(be.get(), 0, &a).is_ok());
  REQUIRE(link_slot_acquire(be.get(), 0, &b).is_ok());
  CHECK(b.words == a.words + 4);  // four words a slot (open, arrived, direct, spare), one slab
  CHECK(a.slab_base == b.slab_base);
  CHECK(a.words[0] == 0);
  CHECK(a.words[1] == 0);
  CHECK(a.words[2] == 0);  // not known to go direct
  void *alloc = nullptr;
  REQUIRE(be->alloc_device(0, 4096, &alloc).is_ok());
  char *buf = static_cast<char *>(alloc) + 512;  // a buffer inside its allocation
  DirectReply r;
  REQUIRE(direct_reply_fill(be.get(), buf, 1024, b, 42, &r).is_ok());
  CHECK(r.magic == kDirectReplyMagic);
  CHECK(r.accept == 1);
  CHECK(r.rbase == 42);
  CHECK(r.buf_base == reinterpret_cast<uint64_t>(alloc));
  CHECK(r.buf_offset == 512);
  CHECK(r.slot_offset == reinterpret_cast<uint64_t>(b.words) - b.slab_base);

  DirectTarget t;
  REQUIRE(direct_map(r, be.get(), 0, 1024, &t).is_ok());
  CHECK(t.dst == be->view + (buf - be->dev));
  CHECK(reinterpret_cast<char *>(t.open) ==
        be->view + (reinterpret_cast<char *>(b.words) - be->dev));
  CHECK(t.arrived == t.open + 1);
  CHECK(t.rbase == 42);

  // A buffer running past its allocation is not offered.
  DirectReply past;
  CHECK(direct_reply_fill(be.get(), buf, 4096, b, 42, &past).code() == MPI_ERR_BUFFER);
}

TEST_CASE("direct rounds: a partly mapped receive buffer is refused by the sender", "[direct]") {
  auto be = std::make_unique<FakeDirectBackend>();
  LinkSlot s;
  REQUIRE(link_slot_acquire(be.get(), 0, &s).is_ok());
  void *alloc = nullptr;
  REQUIRE(be->alloc_device(0, 8192, &alloc).is_ok());
  DirectReply r;
  REQUIRE(direct_reply_fill(be.get(), alloc, 8192, s, 0, &r).is_ok());
  r.pid = 12345;  // another sender process than the test above, for the mapping cache
  be->mapped_short = 4096;
  DirectTarget t;
  CHECK(direct_map(r, be.get(), 0, 8192, &t).code() == MPI_ERR_BUFFER);
  be->mapped_short = 0;
  REQUIRE(direct_map(r, be.get(), 0, 8192, &t).is_ok());
}
