// The stream front end's scheduler (StreamScheduler), behind every MPIX_*_enqueue call: makes
// the op (core/op_create.hpp) on the communicator's stream, gives it the stream's next trigger
// threshold, hands it to the agent, and puts its staging copies and its trigger (written now, or
// deferred to the next stream wait where the stream batches triggers) and, for blocking calls,
// its completion wait on the stream in stream order; MPIX_Wait_enqueue batches the waits.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"
#include "core/op_create.hpp"

namespace mpix {

class Stream;
class ExecStream;

// Call after runtime_init. Nonblocking when @p request is non-null (a generalized request is
// returned); otherwise the stream waits for completion and @p status (may be null) is filled in
// stream order. @p ctx: the communicator's context where the caller has it (comm_ctx_peek;
// null: looked up here).
Status enqueue_op(const EnqueueArgs &a, MPI_Request *request, MPI_Status *status,
                  const std::shared_ptr<CommCtx> *ctx = nullptr);

// Writes the stream's deferred trigger, if it has one (Stream::defers_triggers), so that the
// ops armed so far fire once the stream gets here. Call with the stream's enqueue_mutex held.
Status flush_deferred_trigger(Stream &s, ExecStream &ex);
// Host waits and tests (MPI_Wait & co.) on @p n handles: the deferred trigger of each mpix
// enqueue request's stream is written now, at the stream's current end, so that the op fires
// once the stream gets there (without it, a request only a host thread waits for would wait
// forever). Other handles, MPI_REQUEST_NULL and streams that do not defer are passed over.
Status flush_deferred_for_host_wait(int n, const MPI_Request *reqs);
// The stream of the request's communicator waits for it; the handle is consumed.
Status enqueue_wait(MPI_Request *request, MPI_Status *status);
// The stream waits for every request of @p requests (MPI_REQUEST_NULL entries allowed);
// @p statuses may be MPI_STATUSES_IGNORE. Waits on one stream go in one batch.
Status enqueue_waitall(int count, MPI_Request *requests, MPI_Status *statuses);
// The same for handles already consumed: ops[i] is request_find_all's answer with take (null
// for MPI_REQUEST_NULL), so the table is searched once per wait.
Status enqueue_waitall_ops(int count, MPI_Request *requests, Op *const *ops, MPI_Status *statuses);

}  // namespace mpix
