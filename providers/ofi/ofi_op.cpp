#include "providers/ofi/ofi_op.hpp"

namespace mpix {

Status buffer_layout(const void *buf, int count, MPI_Datatype dt, bool *contiguous, void **start,
                     std::size_t *bytes) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(dt, &size));
  MPIX_MPI_CHECK(MPI_Type_get_extent_x(dt, &lb, &extent));
  MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(dt, &true_lb, &true_extent));
  *bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
  // One element is a single run when its bytes fill its true extent; consecutive elements
  // abut when the extent equals that run too.
  *contiguous = size == true_extent && (count <= 1 || extent == true_extent);
  *start = const_cast<char *>(static_cast<const char *>(buf)) + true_lb;
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
    return make_status(MPI_ERR_TYPE, "MPI_Pack produced %d bytes for %zu bytes of data: provider "
                       "ofi needs MPI's homogeneous packed format", pos, o.len);
  return {};
}

Status unpack_recv(OfiOp &o, std::size_t received) {
  Op &op = *o.op;
  MPI_Count size = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(op.dt, &size));
  if (size == 0 || received == 0) return {};
  int whole = static_cast<int>(received / static_cast<std::size_t>(size));
  int pos = 0;
  MPIX_MPI_CHECK(MPI_Unpack(o.bounce.data(), static_cast<int>(received), &pos, op.rbuf, whole,
                            op.dt, op.comm));
  return {};
}

}  // namespace mpix
