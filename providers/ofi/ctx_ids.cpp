#include "providers/ofi/ctx_ids.hpp"

#include <array>
#include <atomic>
#include <set>
#include <thread>

namespace mpix {
namespace {

constexpr uint32_t kWords = CtxFamily::kFamilies / 64;
static_assert(CtxFamily::kFamilies % 64 == 0, "the free mask is a whole number of words");
using Mask = std::array<uint64_t, kWords>;

struct Blocks {
  std::mutex mu;
  Mask used{};  // bit set: block taken by a live family of this process
  uint32_t in_use = 0;
  // Agreement (ctx_family_open): at most one thread of the process offers the free blocks in a
  // round (mask_busy while it does); among the threads agreeing, the lowest key offers next.
  bool mask_busy = false;
  std::multiset<uint64_t> agreeing;
};

Blocks &blocks() {
  // Process-wide, outliving the Runtime (which leaks its provider for the same reason):
  // communicators whose attributes MPI deletes late in MPI_Finalize, or at exit, give their
  // context ids back here.
  static Blocks *b = new Blocks;
  return *b;
}

void release(uint32_t b) {
  Blocks &bl = blocks();
  std::lock_guard<std::mutex> lk(bl.mu);
  bl.used[b / 64] &= ~(uint64_t{1} << (b % 64));
  --bl.in_use;
}

}  // namespace

CtxFamily::~CtxFamily() { release(block_); }

Status CtxFamily::take(uint32_t *ctx) {
  std::lock_guard<std::mutex> lk(mu_);
  for (uint32_t i = 0; i < kFamilySize; ++i) {
    if (used_ & (1u << i)) continue;
    used_ |= 1u << i;
    *ctx = block_ * kFamilySize + i;
    return {};
  }
  return make_status(MPI_ERR_OTHER,
                     "provider ofi: a stream communicator and its duplicates may have at most %u "
                     "live members; free some, or make a new one with MPIX_Stream_comm_create",
                     kFamilySize);
}

void CtxFamily::give(uint32_t ctx) {
  std::lock_guard<std::mutex> lk(mu_);
  used_ &= ~(1u << (ctx % kFamilySize));
}

// Why this cannot race or livelock: in every round each rank's thread either offers its free
// blocks (it holds its process's mask for the round, so no other thread of the process claims
// anything meanwhile) or offers none. A round succeeds only where every rank offered; then the
// lowest common free block is free on every rank and stays so until its owner claims it. The
// rounds of different communicators may interleave in any order on different ranks; the key
// (the same on every rank of one communicator, different for communicators made at the same
// time) decides who offers next, so the communicator with the lowest key among those being
// made gets the masks of all its ranks within a round or two, and no round of it waits on
// another communicator's progress.
Status ctx_family_open(MPI_Comm comm, std::shared_ptr<CtxFamily> *out, uint32_t *ctx) {
  static std::atomic<uint32_t> seq{0};
  int rank = 0, world = 0;
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPIX_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world));
  // Unique among the communicators being made at once: the root's count, then its rank. A key
  // exists only once every rank has entered this call (the broadcast), so the thread holding
  // the lowest key never waits for a rank that is busy elsewhere.
  uint64_t key = rank == 0 ? (uint64_t{seq.fetch_add(1)} << 32) | static_cast<uint32_t>(world) : 0;
  MPIX_MPI_CHECK(MPI_Bcast(&key, 1, MPI_UINT64_T, 0, comm));
  Blocks &bl = blocks();
  std::multiset<uint64_t>::iterator me;
  {
    std::lock_guard<std::mutex> lk(bl.mu);
    me = bl.agreeing.insert(key);
  }
  auto leave = [&] {
    std::lock_guard<std::mutex> lk(bl.mu);
    bl.agreeing.erase(me);
  };
  constexpr uint32_t kAll = kWords;  // word kAll: all ones where the rank offered its blocks
  for (;;) {
    std::array<uint64_t, kWords + 1> offer{}, all{};
    bool owner = false;
    {
      std::lock_guard<std::mutex> lk(bl.mu);
      if (!bl.mask_busy && *bl.agreeing.begin() == key) {
        owner = bl.mask_busy = true;
        for (uint32_t w = 0; w < kWords; ++w) offer[w] = ~bl.used[w];
        offer[kAll] = ~uint64_t{0};
      }
    }
    int rc = MPI_Allreduce(offer.data(), all.data(), kWords + 1, MPI_UINT64_T, MPI_BAND, comm);
    int64_t pick = -1;
    if (rc == MPI_SUCCESS && all[kAll])
      for (uint32_t w = 0; w < kWords && pick < 0; ++w)
        if (all[w]) pick = w * 64 + __builtin_ctzll(all[w]);
    if (owner) {
      std::lock_guard<std::mutex> lk(bl.mu);
      if (pick >= 0) {
        // Offered as free and no other thread of this process claimed since: ours.
        bl.used[pick / 64] |= uint64_t{1} << (pick % 64);
        ++bl.in_use;
      }
      bl.mask_busy = false;
    }
    if (rc != MPI_SUCCESS) {
      leave();
      return mpi_status(rc, "MPI_Allreduce", __FILE__, __LINE__);
    }
    if (!all[kAll]) {  // some rank's mask was busy with another communicator: again
      std::this_thread::yield();
      continue;
    }
    leave();
    if (pick < 0)
      return make_status(MPI_ERR_OTHER,
                         "provider ofi: no communicator context id is free on every rank (%u "
                         "stream communicator families live); free some stream communicators",
                         CtxFamily::kFamilies);
    auto fam = std::make_shared<CtxFamily>(static_cast<uint32_t>(pick));
    MPIX_TRY(fam->take(ctx));
    *out = std::move(fam);
    return {};
  }
}

uint32_t ctx_families_in_use() {
  Blocks &bl = blocks();
  std::lock_guard<std::mutex> lk(bl.mu);
  return bl.in_use;
}

}  // namespace mpix
