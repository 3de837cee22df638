// Where partitioned traffic travels: three private communicators per user communicator, so it
// never matches the application's own messages (MPI reserves no tag space for libraries).
//   hdr   one header per request pair, sent at init with the USER's tag: the k-th partitioned
//         send to a peer with a tag matches the k-th partitioned receive there (MPI-4 order).
//   data  one message per send partition and round, on a tag range the sender allocates and
//         names in the header.
//   ctl   the receiver's answer to a sender's offer of direct rounds (partitioned/direct_link.hpp),
//         tagged by the sender's data-tag base; receiver to sender only.
// Each has the provider's per-communicator state (a CommCtx without stream), so partitioned
// messages are ordinary ops of the provider in use; data's is made as a stream communicator's
// is where the user communicator has a stream, so that partitions of device buffers take the
// provider's GPU-direct path (providers/mpi/ipc_path.hpp).
// Both are made by the first partitioned init on the user communicator (collective over it;
// later inits are local) and cached on it as an attribute. Requests hold a reference, so
// freeing the user communicator early is safe.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"

namespace mpix {

struct CommCtx;
struct CommStreamInfo;

struct PrivateComms {
  MPI_Comm hdr = MPI_COMM_NULL;
  MPI_Comm data = MPI_COMM_NULL;
  MPI_Comm ctl = MPI_COMM_NULL;
  std::shared_ptr<CommCtx> hdr_ctx, data_ctx, ctl_ctx;
  ~PrivateComms();
};

// The private communicators of @p comm, made on first use (collective then). @p si: the
// stream of @p comm where it is a stream communicator (null on every rank where it is not): the
// data communicator then gets the provider's per-stream state, as MPIX_Stream_comm_create
// makes it (provider mpi: GPU-direct between same-node GPUs).
Status private_comms_get(MPI_Comm comm, const CommStreamInfo *si,
                         std::shared_ptr<PrivateComms> *out);

// MPI_TAG_UB (of MPI_COMM_WORLD: communicators made by MPI_Comm_split carry no attributes).
int tag_upper_bound();

// A range of @p n data tags unused by this process's live partitioned sends; MPI_ERR_OTHER if
// the tag space (MPI_TAG_UB) cannot hold it.
Status data_tags_acquire(int n, int *base);
void data_tags_release(int base, int n);

}  // namespace mpix
