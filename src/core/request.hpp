// Requests returned by *_enqueue calls are MPI generalized requests, so MPI_Wait / MPI_Test on
// the host work as well as MPIX_Wait_enqueue. A map from the MPI_Request handle to its op lets
// MPIX_Wait_enqueue find the op's completion word.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "base/status.hpp"

namespace mpix {

struct Op;

// Starts the generalized request of @p op (takes a reference to it) and records the handle: its
// spare request, if it has one.
Status request_start(Op *op);
// Starts a spare request for @p op, a retired op with none that waits in a pool (its next
// request_start takes it). False if MPI refused (nothing changed then).
bool request_make_spare(Op *op);
// Agent thread, in op_complete: @p op completed and a stream wait consumed its handle, so no
// one can wait on or test its generalized request, which was never completed. Keeps that
// request as the op's spare (Op::spare_request, back in the table) instead of completing and
// freeing it, so that the op, once retired, goes to the spare pool and a later enqueue reuses
// both without an MPI_Grequest_start. False (nothing changed) when the spares are at their cap;
// true means the request's reference to the op is the caller's to drop.
bool request_recycle(Op *op);
// Completes and frees @p op's spare request (a retired op about to be deleted, MPI not yet
// finalised); its free_fn does nothing.
void request_drop_spare(Op *op);
// The op behind @p req, or null if @p req is not an mpix enqueue request. Removes the entry
// when @p take is set (the handle is being consumed by MPIX_Wait_enqueue).
Op *request_find(MPI_Request req, bool take);
// request_find for @p n handles under one lock: sets ops[i] (null for MPI_REQUEST_NULL).
// Returns -1 when every non-null handle is an mpix enqueue request, else the index of the first
// that is not; with @p take the entries are removed, and only if all were found.
int request_find_all(int n, const MPI_Request *reqs, Op **ops, bool take);
// Agent thread: the op completed. Completes the generalized request and, if a stream already
// waits on it (MPIX_Wait_enqueue consumed the handle), frees it.
void request_complete(Op *op, bool free_now);
// Frees the generalized request @p r of an op whose handle was consumed after it completed
// (read the handle before the op can go away).
void request_free(MPI_Request r);
// Requests handed out and not yet waited on or freed (for tests).
std::size_t request_count();

}  // namespace mpix
