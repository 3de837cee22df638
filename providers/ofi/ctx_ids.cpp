#include "providers/ofi/ctx_ids.hpp"

#include <array>

namespace mpix {
namespace {

constexpr uint32_t kWords = CtxFamily::kFamilies / 64;
static_assert(CtxFamily::kFamilies % 64 == 0, "the free mask is a whole number of words");
using Mask = std::array<uint64_t, kWords>;

struct Blocks {
  std::mutex mu;
  Mask used{};  // bit set: block taken by a live family of this process
  uint32_t in_use = 0;
};

Blocks &blocks() {
  static Blocks *b = new Blocks;  // outlives static destructors (comms freed late)
  return *b;
}

bool claim(uint32_t b) {
  Blocks &bl = blocks();
  std::lock_guard<std::mutex> lk(bl.mu);
  uint64_t bit = uint64_t{1} << (b % 64);
  if (bl.used[b / 64] & bit) return false;
  bl.used[b / 64] |= bit;
  ++bl.in_use;
  return true;
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

Status ctx_family_open(MPI_Comm comm, std::shared_ptr<CtxFamily> *out, uint32_t *ctx) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    Mask free_local{};
    {
      Blocks &bl = blocks();
      std::lock_guard<std::mutex> lk(bl.mu);
      for (uint32_t w = 0; w < kWords; ++w) free_local[w] = ~bl.used[w];
    }
    Mask free_all{};
    MPIX_MPI_CHECK(MPI_Allreduce(free_local.data(), free_all.data(), kWords, MPI_UINT64_T,
                                 MPI_BAND, comm));
    int64_t pick = -1;
    for (uint32_t w = 0; w < kWords && pick < 0; ++w)
      if (free_all[w]) pick = w * 64 + __builtin_ctzll(free_all[w]);
    if (pick < 0)
      return make_status(MPI_ERR_OTHER,
                         "provider ofi: no communicator context id is free on every rank (%u "
                         "stream communicator families live); free some stream communicators",
                         CtxFamily::kFamilies);
    int ok = claim(static_cast<uint32_t>(pick)) ? 1 : 0, all_ok = 0;
    int rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS) {
      if (ok) release(static_cast<uint32_t>(pick));
      return mpi_status(rc, "MPI_Allreduce", __FILE__, __LINE__);
    }
    if (all_ok) {
      auto fam = std::make_shared<CtxFamily>(static_cast<uint32_t>(pick));
      MPIX_TRY(fam->take(ctx));
      *out = std::move(fam);
      return {};
    }
    if (ok) release(static_cast<uint32_t>(pick));  // another thread raced us on some rank
  }
  return make_status(MPI_ERR_OTHER, "provider ofi: could not agree on a communicator context id "
                                    "(concurrent stream communicator creation kept racing)");
}

uint32_t ctx_families_in_use() {
  Blocks &bl = blocks();
  std::lock_guard<std::mutex> lk(bl.mu);
  return bl.in_use;
}

}  // namespace mpix
