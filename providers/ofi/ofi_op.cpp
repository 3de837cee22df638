#include "providers/ofi/ofi_op.hpp"

#include <cstring>

#include "providers/ofi/typemap_order.hpp"

namespace mpix {

Status buffer_layout(const void *buf, int count, MPI_Datatype dt, bool *contiguous, void **start,
                     std::size_t *bytes) {
  MPI_Count size = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(dt, &size));
  *bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
  // In place only where memory order is typemap order (typemap_order.hpp); everything else
  // goes through MPI_Pack / MPI_Unpack, which follow the typemap.
  MPI_Aint first = 0;
  MPIX_TRY(typemap_in_order(count, dt, contiguous, &first));
  *start = const_cast<char *>(static_cast<const char *>(buf)) + first;
  if (*bytes == 0) *start = const_cast<void *>(buf);
  return {};
}

Status pack_send(OfiOp &o) {
  Op &op = *o.op;
  int pos = 0;
  MPIX_MPI_CHECK(MPI_Pack(op.sbuf, op.count, op.dt, o.bounce.data(),
                          static_cast<int>(o.bounce.size()), &pos, op.comm));
  // The wire carries the data's bytes (o.len, fixed when the op was armed); a packed format
  // with headers or padding would not match a contiguous receive on the peer.
  if (static_cast<std::size_t>(pos) != o.len)
    return make_status(MPI_ERR_TYPE,
                       "MPI_Pack produced %d bytes for %zu bytes of data: provider "
                       "ofi needs MPI's homogeneous packed format",
                       pos, o.len);
  return {};
}

Status unpack_recv(OfiOp &o, std::size_t received) {
  Op &op = *o.op;
  MPI_Count size = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(op.dt, &size));
  if (size == 0 || received == 0) return {};
  const auto esize = static_cast<std::size_t>(size);
  const int whole = static_cast<int>(received / esize);
  const std::size_t rest = received % esize;
  int pos = 0;
  MPIX_MPI_CHECK(MPI_Unpack(o.bounce.data(), static_cast<int>(received), &pos, op.rbuf, whole,
                            op.dt, op.comm));
  if (rest == 0 || whole >= op.count) return {};
  // A partial last element: MPI fills the first typemap entries the message covers. MPI_Unpack
  // moves whole elements only, so pack the element as it stands, lay the received bytes over
  // its start, and unpack it whole (the bytes past them are written back unchanged).
  MPI_Count lb = 0, extent = 0;
  MPIX_MPI_CHECK(MPI_Type_get_extent_x(op.dt, &lb, &extent));
  char *elem = static_cast<char *>(op.rbuf) + static_cast<MPI_Aint>(whole) * extent;
  std::vector<char> tmp(esize);
  int ppos = 0;
  MPIX_MPI_CHECK(MPI_Pack(elem, 1, op.dt, tmp.data(), static_cast<int>(esize), &ppos, op.comm));
  if (static_cast<std::size_t>(ppos) != esize)
    return make_status(MPI_ERR_TYPE,
                       "MPI_Pack produced %d bytes for a %zu-byte element: "
                       "provider ofi needs MPI's homogeneous packed format",
                       ppos, esize);
  std::memcpy(tmp.data(), o.bounce.data() + static_cast<std::size_t>(pos), rest);
  int upos = 0;
  MPIX_MPI_CHECK(MPI_Unpack(tmp.data(), static_cast<int>(esize), &upos, elem, 1, op.dt, op.comm));
  return {};
}

}  // namespace mpix
