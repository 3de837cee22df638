// Where partitioned traffic travels: two private communicators per user communicator, so it
// never matches the application's own messages (MPI reserves no tag space for libraries).
//   hdr   one header per request pair, sent at init with the USER's tag: the k-th partitioned
//         send to a peer with a tag matches the k-th partitioned receive there (MPI-4 order).
//   data  one message per send partition and round, on a tag range the sender allocates and
//         names in the header.
// Each has the provider's per-communicator state (a CommCtx without stream), so partitioned
// messages are ordinary ops of the provider in use.
// Both are made by the first partitioned init on the user communicator (collective over it;
// later inits are local) and cached on it as an attribute. Requests hold a reference, so
// freeing the user communicator early is safe.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"

namespace mpix {

struct CommCtx;

struct PrivateComms {
  MPI_Comm hdr = MPI_COMM_NULL;
  MPI_Comm data = MPI_COMM_NULL;
  std::shared_ptr<CommCtx> hdr_ctx, data_ctx;
  ~PrivateComms();
};

// The private communicators of @p comm, made on first use (collective then).
Status private_comms_get(MPI_Comm comm, std::shared_ptr<PrivateComms> *out);

// A range of @p n data tags unused by this process's live partitioned sends; MPI_ERR_OTHER if
// the tag space (MPI_TAG_UB) cannot hold it.
Status data_tags_acquire(int n, int *base);
void data_tags_release(int base, int n);

}  // namespace mpix
