// Communicator context ids for the tag layout (tag_layout.hpp). Every rank of a communicator
// must use the same id, and no two live communicators of a process may share one.
//
// The id space is cut into blocks ("families") of kFamilySize ids. MPIX_Stream_comm_create
// (collective) agrees on a block free on every rank: rounds of MPI_Allreduce(BAND) of the
// free-block masks, where in each process one thread at a time offers its free blocks (the
// others offer none and try again), the communicator with the lowest key first (ctx_ids.cpp
// says why that neither races nor livelocks when threads create communicators at once). The
// new communicator takes member 0 of the family.
//
// MPI_Comm_dup / idup of a stream communicator is local here (the attribute copy callback does
// not even get the new handle), so a duplicate takes the lowest free member of its parent's
// family. Duplicates of a family are made by collective calls over the same group, which every
// rank issues in the same order, so every rank picks the same member. A family is given back
// when its last communicator is freed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "base/status.hpp"
#include "providers/ofi/tag_layout.hpp"

namespace mpix {

class CtxFamily {
 public:
  static constexpr uint32_t kFamilySize = 32;
  static constexpr uint32_t kFamilies = ofi_tag::kNumCtx / kFamilySize;

  explicit CtxFamily(uint32_t block) : block_(block) {}
  ~CtxFamily();
  CtxFamily(const CtxFamily &) = delete;
  CtxFamily &operator=(const CtxFamily &) = delete;

  // Takes the lowest free member; fails when all kFamilySize are live.
  Status take(uint32_t *ctx);
  void give(uint32_t ctx);
  uint32_t block() const { return block_; }

 private:
  uint32_t block_;
  std::mutex mu_;
  uint32_t used_ = 0;  // bit i: member i is live
  static_assert(kFamilySize <= 32, "members are tracked in a 32-bit mask");
};

// Collective over @p comm: a new family agreed by all its ranks, with member 0 taken (*ctx).
Status ctx_family_open(MPI_Comm comm, std::shared_ptr<CtxFamily> *out, uint32_t *ctx);
// Families in use in this process (tests).
uint32_t ctx_families_in_use();

}  // namespace mpix
