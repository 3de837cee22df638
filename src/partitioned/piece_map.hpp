// How a partitioned send's partitions land in a receive with a different partition count
// (MPI-4 allows it: only the total size must match). Each send partition travels as one
// message, a "piece"; the receive places piece i at the byte offset i * send_bytes, and receive
// partition j has arrived once every piece overlapping its bytes has landed. Pure arithmetic,
// so it is unit-tested on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.hpp"

namespace mpix {

struct PieceMap {
  struct Piece {
    int64_t elem_offset = 0;  // first receive element the piece fills
    int count = 0;            // receive elements in the piece
    int first_part = 0;       // receive partitions it completes part of: [first_part, last_part]
    int last_part = -1;       // (empty when the piece or the receive partitions have no bytes)
  };
  std::vector<Piece> pieces;   // one per send partition
  std::vector<int> pieces_of;  // per receive partition: pieces overlapping it (0: none)

  // @p send_parts partitions of @p send_bytes bytes each into @p recv_parts partitions of
  // @p recv_bytes bytes, in receive elements of @p elem_size bytes. Errors: MPI_ERR_TRUNCATE
  // (sender has more data), MPI_ERR_COUNT (less), MPI_ERR_TYPE (a piece boundary splits a
  // receive element), MPI_ERR_COUNT (a piece of more than INT_MAX elements).
  static Status build(int64_t send_parts, int64_t send_bytes, int64_t recv_parts,
                      int64_t recv_bytes, int64_t elem_size, PieceMap *out);
};

}  // namespace mpix
