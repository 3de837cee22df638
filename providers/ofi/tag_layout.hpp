// The 64-bit libfabric tag of an mpix message (DESIGN.md §3):
//
//   63        62 ........ 49   48 ............ 31   30 ............. 0
//   internal  context id (14)  source rank (18)     MPI tag (31)
//
// 31 tag bits carry every tag up to Open MPI's MPI_TAG_UB (2^31 - 1), so a program written
// against MPI_TAG_UB works unchanged; the price is at most 2^18 ranks per communicator.
//
// The context id keeps communicators apart (a duplicate gets its own), the source rank makes
// MPI_ANY_SOURCE work through ignore bits without FI_SOURCE address lookups, and the internal
// bit separates mpix's own traffic (the start-up self-test) from application messages.
// Receives always match the internal bit and the context id; MPI_ANY_SOURCE / MPI_ANY_TAG set
// the ignore bits of their field.
#pragma once

#include <cstdint>

namespace mpix {
namespace ofi_tag {

constexpr unsigned kTagBits = 31;
constexpr unsigned kSrcBits = 18;
constexpr unsigned kCtxBits = 14;
constexpr unsigned kInternalBits = 1;
static_assert(kTagBits + kSrcBits + kCtxBits + kInternalBits == 64,
              "the tag layout must fill the 64-bit libfabric tag exactly");

constexpr unsigned kSrcShift = kTagBits;
constexpr unsigned kCtxShift = kTagBits + kSrcBits;
constexpr unsigned kInternalShift = kCtxShift + kCtxBits;
static_assert(kInternalShift == 63, "the internal bit is the top bit");

constexpr uint64_t kTagMask = (uint64_t{1} << kTagBits) - 1;
constexpr uint64_t kSrcMask = ((uint64_t{1} << kSrcBits) - 1) << kSrcShift;
constexpr uint64_t kCtxMask = ((uint64_t{1} << kCtxBits) - 1) << kCtxShift;
constexpr uint64_t kInternal = uint64_t{1} << kInternalShift;
static_assert((kTagMask & kSrcMask) == 0 && (kSrcMask & kCtxMask) == 0 &&
                  (kCtxMask & kInternal) == 0,
              "tag fields overlap");
static_assert((kTagMask | kSrcMask | kCtxMask | kInternal) == ~uint64_t{0},
              "tag fields leave bits unused");

constexpr int kMaxTag = static_cast<int>(kTagMask);    // largest MPI tag carried
constexpr int kMaxRanks = 1 << kSrcBits;               // largest communicator
constexpr uint32_t kNumCtx = uint32_t{1} << kCtxBits;  // context ids

constexpr uint64_t encode(uint32_t ctx, int src, int tag) {
  return (uint64_t{ctx} << kCtxShift) | (static_cast<uint64_t>(src) << kSrcShift) |
         static_cast<uint64_t>(tag);
}
constexpr int source_of(uint64_t t) { return static_cast<int>((t & kSrcMask) >> kSrcShift); }
constexpr int tag_of(uint64_t t) { return static_cast<int>(t & kTagMask); }
constexpr uint32_t ctx_of(uint64_t t) { return static_cast<uint32_t>((t & kCtxMask) >> kCtxShift); }

static_assert(source_of(encode(5, 1234, 77)) == 1234, "source field round trip");
static_assert(tag_of(encode(5, 1234, kMaxTag)) == kMaxTag, "tag field round trip");
static_assert(ctx_of(encode(kNumCtx - 1, kMaxRanks - 1, 0)) == kNumCtx - 1, "ctx round trip");
static_assert((encode(kNumCtx - 1, kMaxRanks - 1, kMaxTag) & kInternal) == 0,
              "application tags never set the internal bit");

}  // namespace ofi_tag
}  // namespace mpix
