#include "api/checks.hpp"

#include <mutex>

#include "core/named_types.hpp"
#include "core/runtime.hpp"
#include "core/type_probe.hpp"

namespace mpix {
namespace {

// MPI has no query for "is this datatype committed". A zero-count MPI_Send to MPI_PROC_NULL
// asks the library's own argument checks instead: Open MPI (with its default
// mpi_param_check) and MPICH (with error checking) refuse an uncommitted type with
// MPI_ERR_TYPE there, touch no buffer and send nothing. It goes to a private duplicate of
// MPI_COMM_SELF with MPI_ERRORS_RETURN (core/type_probe.hpp), so the user's error handlers
// never see the probe. Where the library checks nothing, the probe returns success.
}  // namespace

Status check_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return make_status(MPI_ERR_COMM, "communicator is MPI_COMM_NULL");
  return {};
}

Status check_count(int count) {
  if (count < 0) return make_status(MPI_ERR_COUNT, "count %d is negative", count);
  return {};
}

Status check_datatype(MPI_Datatype dt) {
  if (dt == MPI_DATATYPE_NULL) return make_status(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  bool named = false;
  MPIX_TRY(datatype_is_named(dt, &named));
  if (named) return {};  // predefined: always committed
  MPI_Comm probe = MPI_COMM_NULL;
  MPIX_TRY(type_probe_comm(&probe));
  int rc = MPI_Send(nullptr, 0, dt, MPI_PROC_NULL, 0, probe);
  if (rc == MPI_SUCCESS) return {};
  int cls = MPI_ERR_TYPE;
  MPI_Error_class(rc, &cls);
  if (cls == MPI_ERR_TYPE)
    return make_status(MPI_ERR_TYPE,
                       "datatype is not committed (call MPI_Type_commit first) or "
                       "not valid");
  return mpi_status(rc, "MPI_Send(0 elements of datatype to MPI_PROC_NULL)", __FILE__, __LINE__);
}

Status check_buffer(const void *buf, int count, MPI_Datatype dt, const char *name) {
  if (buf || count == 0) return {};
  int ni, na, nd, combiner;
  MPIX_MPI_CHECK(MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner));
  int size = 0;
  MPIX_MPI_CHECK(MPI_Type_size(dt, &size));
  if (combiner == MPI_COMBINER_NAMED && size > 0)
    return make_status(MPI_ERR_BUFFER, "%s is NULL with count %d", name, count);
  return {};
}

Status check_rank(MPI_Comm comm, int rank, bool any, int peers) {
  if (rank == MPI_PROC_NULL || (any && rank == MPI_ANY_SOURCE)) return {};
  int size = peers;
  if (size < 0) {
    int inter = 0;
    MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
    if (inter) MPIX_MPI_CHECK(MPI_Comm_remote_size(comm, &size));
    else MPIX_MPI_CHECK(MPI_Comm_size(comm, &size));
  }
  if (rank < 0 || rank >= size)
    return make_status(MPI_ERR_RANK, "rank %d is outside the communicator (size %d)", rank, size);
  return {};
}

Status check_tag(int tag, bool any) {
  if (any && tag == MPI_ANY_TAG) return {};
  static const int tag_ub = [] {
    int *ub = nullptr, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    return flag ? *ub : 32767;
  }();
  if (tag < 0 || tag > tag_ub)
    return make_status(MPI_ERR_TAG, "tag %d is outside 0..MPI_TAG_UB (%d)", tag, tag_ub);
  return {};
}

Status check_p2p_each(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                      bool is_recv, int peers) {
  MPIX_TRY(check_comm(comm));
  MPIX_TRY(check_count(count));
  MPIX_TRY(check_datatype(dt));
  MPIX_TRY(check_buffer(buf, count, dt, "buf"));
  MPIX_TRY(check_rank(comm, peer, is_recv, peers));
  MPIX_TRY(check_tag(tag, is_recv));
  return {};
}

}  // namespace mpix
