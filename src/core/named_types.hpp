// Named (predefined) datatypes seen so far, so that the enqueue path's datatype checks ask MPI
// nothing in the common case. A named type is never freed, so its handle never comes back as a
// derived type: an entry stays true for the life of MPI. A small direct-mapped table of
// atomics; a collision only costs a new query.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "base/status.hpp"

namespace mpix {

namespace named_types_detail {
constexpr std::size_t kSlots = 16;
inline std::atomic<MPI_Datatype> g_named[kSlots];

inline std::atomic<MPI_Datatype> &slot(MPI_Datatype dt) {
  uint64_t bits = 0;
  static_assert(sizeof(MPI_Datatype) <= sizeof bits, "handle larger than 64 bits");
  std::memcpy(&bits, &dt, sizeof dt);
  return g_named[static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> 60) % kSlots];
}
}  // namespace named_types_detail

// Whether @p dt is a predefined datatype already seen (datatype_is_named said so): one load,
// no MPI call. False says nothing (not seen yet, or a collision).
inline bool datatype_known_named(MPI_Datatype dt) {
  return dt != MPI_DATATYPE_NULL &&
         named_types_detail::slot(dt).load(std::memory_order_relaxed) == dt;
}

// *@p named: whether @p dt (not MPI_DATATYPE_NULL) is a predefined datatype.
inline Status datatype_is_named(MPI_Datatype dt, bool *named) {
  if (datatype_known_named(dt)) {
    *named = true;
    return {};
  }
  std::atomic<MPI_Datatype> &s = named_types_detail::slot(dt);
  int ni, na, nd, combiner;
  MPIX_MPI_CHECK(MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner));
  *named = combiner == MPI_COMBINER_NAMED;
  if (*named) s.store(dt, std::memory_order_relaxed);
  return {};
}

}  // namespace mpix
