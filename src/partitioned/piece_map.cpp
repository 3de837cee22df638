#include "partitioned/piece_map.hpp"

#include <climits>

namespace mpix {

Status PieceMap::build(int64_t send_parts, int64_t send_bytes, int64_t recv_parts,
                       int64_t recv_bytes, int64_t elem_size, PieceMap *out) {
  const int64_t total = send_parts * send_bytes, rtotal = recv_parts * recv_bytes;
  if (total > rtotal)
    return make_status(MPI_ERR_TRUNCATE,
                       "the partitioned send carries %lld bytes (%lld x %lld), "
                       "more than the receive's %lld (%lld x %lld)",
                       (long long)total, (long long)send_parts, (long long)send_bytes,
                       (long long)rtotal, (long long)recv_parts, (long long)recv_bytes);
  if (total < rtotal)
    return make_status(MPI_ERR_COUNT,
                       "the partitioned send carries %lld bytes (%lld x %lld), "
                       "fewer than the receive's %lld (%lld x %lld); MPI-4 needs equal sizes",
                       (long long)total, (long long)send_parts, (long long)send_bytes,
                       (long long)rtotal, (long long)recv_parts, (long long)recv_bytes);
  PieceMap m;
  m.pieces.resize(static_cast<std::size_t>(send_parts));
  m.pieces_of.assign(static_cast<std::size_t>(recv_parts), 0);
  for (int64_t i = 0; i < send_parts; ++i) {
    Piece &p = m.pieces[static_cast<std::size_t>(i)];
    const int64_t lo = i * send_bytes, hi = lo + send_bytes;
    if (elem_size > 0) {
      if (lo % elem_size || send_bytes % elem_size)
        return make_status(MPI_ERR_TYPE,
                           "send partition %lld (bytes %lld..%lld) splits a "
                           "receive element of %lld bytes",
                           (long long)i, (long long)lo, (long long)hi, (long long)elem_size);
      p.elem_offset = lo / elem_size;
      const int64_t n = send_bytes / elem_size;
      if (n > INT_MAX)
        return make_status(MPI_ERR_COUNT,
                           "send partition %lld is %lld receive elements, more "
                           "than INT_MAX",
                           (long long)i, (long long)n);
      p.count = static_cast<int>(n);
    }
    if (send_bytes > 0 && recv_bytes > 0) {
      p.first_part = static_cast<int>(lo / recv_bytes);
      p.last_part = static_cast<int>((hi - 1) / recv_bytes);
      for (int j = p.first_part; j <= p.last_part; ++j) ++m.pieces_of[static_cast<std::size_t>(j)];
    }
  }
  *out = std::move(m);
  return {};
}

}  // namespace mpix
