/**
 * @file mpix.h
 * @brief mpix: stream- and kernel-triggered MPI for any MPI library.
 *
 * Plain C. Signatures of existing APIs (MPICH's MPIX_Stream, HPE Cray MPICH's MPIX_Queue,
 * MPI-4 partitioned calls with the MPIX_ prefix) are kept verbatim so code moves between
 * implementations. Every call returns an MPI error class (MPI_SUCCESS on success) and, on
 * error, also invokes the error handler of the communicator involved (MPI_COMM_WORLD's when
 * no communicator is involved). Each error is logged once with the call and the argument.
 *
 * Requirements: MPI initialised with MPI_THREAD_MULTIPLE (the mpix agent thread calls MPI);
 * otherwise calls fail with MPI_ERR_OTHER and a message saying so.
 */
#ifndef MPIX_MPIX_H
#define MPIX_MPIX_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIX_VERSION_MAJOR 0
#define MPIX_VERSION_MINOR 1

/** Tells code that mpix's stream API is present (MPICH defines the same macro). */
#define MPIX_STREAM_ENQUEUE 1

/** Opaque stream handle (MPICH-compatible). */
typedef struct mpix_stream_s *MPIX_Stream;
/** The null stream handle. */
#define MPIX_STREAM_NULL ((MPIX_Stream)0)

/* ----------------------------------------------------------------------------------------- */
/* MPICH-compatible stream API                                                                */
/* ----------------------------------------------------------------------------------------- */

/**
 * Sets @p key in @p info to the hex encoding of @p value_size bytes at @p value
 * (used to pass a cudaStream_t / hipStream_t / mpix_host_stream_t to MPIX_Stream_create).
 * @return MPI_SUCCESS, MPI_ERR_INFO (null info), MPI_ERR_ARG (null key/value, size <= 0).
 */
int MPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size);

/**
 * Creates a stream. @p info keys: "type" = "cudaStream_t" | "hipStream_t" | "mpix_host_stream";
 * "value" = the native handle, hex-encoded with MPIX_Info_set_hex (for "mpix_host_stream" the
 * value may be omitted: mpix then creates and owns a host stream); "mpix_trigger" = "memop" |
 * "hostfn" | "kernel" (GPU streams). MPI_INFO_NULL or no "type" gives a general stream whose
 * communicator carries ordinary MPI traffic; ops enqueued on it run in order on a host stream
 * mpix creates on first use.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null @p stream, unknown type, missing/bad value),
 *         MPI_ERR_UNSUPPORTED_OPERATION (type whose backend is not built or has no device),
 *         MPI_ERR_OTHER (MPI not initialised with MPI_THREAD_MULTIPLE).
 */
int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream);

/**
 * Frees a stream and sets @p *stream to MPIX_STREAM_NULL.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null, already freed or unknown handle),
 *         MPI_ERR_PENDING (ops enqueued on the stream have not completed; nothing is freed),
 *         MPI_ERR_OTHER (a stream communicator still uses the stream; nothing is freed).
 */
int MPIX_Stream_free(MPIX_Stream *stream);

/**
 * Collective over @p comm: duplicates @p comm into @p newcomm and attaches @p stream to it.
 * MPI_Comm_dup / MPI_Comm_idup of the result keep the stream; MPI_Comm_free releases it.
 * With MPIX_STREAM_NULL the result is a plain duplicate.
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG (null @p newcomm, bad stream handle).
 */
int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm);

/**
 * Returns the stream attached to @p comm (MPIX_STREAM_NULL if none). @p idx must be 0 or -1.
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG.
 */
int MPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream);

/**
 * Blocks the calling thread until everything enqueued on @p stream so far has executed
 * (cudaStreamSynchronize / hipStreamSynchronize / host-stream drain). An mpix addition.
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad handle), MPI_ERR_OTHER (backend error).
 */
int MPIX_Stream_synchronize(MPIX_Stream stream);

/**
 * Enqueues a blocking send on the stream of @p comm: the send buffer is read once the stream
 * reaches this point; the stream goes on once the send has completed (MPI_Send semantics).
 * @return MPI_SUCCESS, MPI_ERR_COMM (null comm / no stream), MPI_ERR_BUFFER (null buf with
 *         count > 0), MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_OTHER.
 */
int MPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm);

/**
 * Enqueues a blocking receive: the receive is posted when the stream reaches it, and the stream
 * goes on once the data has landed. @p status (or MPI_STATUS_IGNORE) is filled in stream order:
 * read it after the stream has passed this point (e.g. after MPIX_Stream_synchronize).
 * Errors as MPIX_Send_enqueue (source may be MPI_ANY_SOURCE, tag MPI_ANY_TAG).
 */
int MPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Status *status);

/**
 * Enqueues a nonblocking send. @p request is a real MPI request (generalized request): complete
 * it in stream order with MPIX_Wait_enqueue / MPIX_Waitall_enqueue, or on the host with
 * MPI_Wait / MPI_Test. Errors as MPIX_Send_enqueue, plus MPI_ERR_ARG for a null @p request.
 */
int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request);

/** Enqueues a nonblocking receive; see MPIX_Isend_enqueue and MPIX_Recv_enqueue. */
int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Request *request);

/**
 * Makes the stream of the request's communicator wait until @p request completes, then sets
 * @p *request to MPI_REQUEST_NULL (MPI_REQUEST_NULL is accepted and is a no-op). @p status is
 * filled in stream order.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null pointer), MPI_ERR_REQUEST (not an mpix enqueue request).
 */
int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status);

/** MPIX_Wait_enqueue for each of @p count requests (MPI_REQUEST_NULL entries allowed). */
int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                         MPI_Status array_of_statuses[]);

/**
 * Enqueues an allreduce on the stream of @p comm (MPI_IN_PLACE allowed): runs when the stream
 * reaches it; the stream goes on once the result is in @p recvbuf.
 */
int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif /* MPIX_MPIX_H */
