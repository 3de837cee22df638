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
 * Datatypes: MPI_ERR_TYPE (at the call, before anything is enqueued) means MPI_DATATYPE_NULL
 * or a derived datatype that is not committed. MPI has no query for the committed state; mpix
 * asks the MPI library's own argument checks (Open MPI with its default mpi_param_check, MPICH
 * with error checking) and never commits the caller's datatype. A bad MPIX_* environment
 * setting fails every call with MPI_ERR_ARG naming the variable (see mpix_info).
 *
 * Resources: no C++ exception leaves any call. A thread mpix needs (a host-stream worker, the
 * agent) that cannot be started is MPI_ERR_OTHER, memory exhaustion MPI_ERR_NO_MEM, both
 * before anything is enqueued; MPI_ERR_INTERN is a bug in mpix.
 *
 * Requirements: an MPI library that can give MPI_THREAD_MULTIPLE (the mpix agent thread calls
 * MPI). libmpix defines MPI_Init, MPI_Init_thread and MPI_Query_thread (profiling interface):
 * they ask the library for MPI_THREAD_MULTIPLE and report the level the caller asked for, so
 * codes calling plain MPI_Init work unchanged (link libmpix before libmpi). Where the library
 * cannot give MPI_THREAD_MULTIPLE, calls fail with MPI_ERR_OTHER and a message saying so.
 * libmpix also defines MPI_Finalize (progress threads of MPIX_Start_progress_thread are stopped
 * first) and MPI_Comm_free: a stream communicator with enqueued ops not yet completed
 * is not freed (MPI_ERR_PENDING), whatever the MPI library. And, as MPICH orders them, plain
 * MPI calls on a stream communicator of a GPU stream (or of a host stream made with the info
 * key mpix_sync_plain_calls = "true"; "false" turns it off for a GPU stream) (MPI_Send, MPI_Ssend,
 * MPI_Rsend, MPI_Bsend, MPI_Isend, MPI_Issend, MPI_Recv, MPI_Irecv, MPI_Sendrecv,
 * MPI_Sendrecv_replace, MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Scatter,
 * MPI_Allgather, MPI_Alltoall) synchronise the stream first, then call the MPI library.
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
 * "hostfn" | "kernel" (GPU streams); "mpix_sync_plain_calls" = "true" | "false" (default: true
 * for GPU streams, false for host streams): plain MPI calls on the stream's communicators
 * synchronise it first (see the top of this file). MPI_INFO_NULL or no "type" gives a general
 * stream whose communicator carries ordinary MPI traffic; ops enqueued on it run in order on a host
 * stream mpix creates on first use.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null @p stream, unknown type, missing/bad value, a
 *         "mpix_host_stream" value that is no live host stream: never created by
 *         mpix_host_stream_create, or already destroyed), MPI_ERR_UNSUPPORTED_OPERATION (type
 *         whose backend is not built or has no device), MPI_ERR_OTHER (the MPI library runs
 *         below MPI_THREAD_MULTIPLE).
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
 * Collective over @p comm (MPICH 4.2): duplicates @p comm into @p newcomm and attaches this
 * rank's @p count streams to it, indices 0..count-1 (entries may be MPIX_STREAM_NULL; ranks may
 * pass different counts; count 0 means one MPIX_STREAM_NULL entry). Messages between stream
 * indices go with MPIX_Stream_send / isend / recv / irecv; a message from stream i of the sender
 * to stream j of the receiver matches only a receive naming that pair. Costs width x width
 * extra communicators (width: the largest count of any rank), made here collectively.
 * MPI_Comm_dup of the result is a plain communicator; MPI_Comm_free releases the streams
 * (MPIX_Stream_free of one fails while a communicator uses it). The MPIX_*_enqueue calls need a
 * single-stream communicator (MPIX_Stream_comm_create); on this one they fail with MPI_ERR_COMM.
 * @return MPI_SUCCESS, MPI_ERR_COMM (null or intercommunicator), MPI_ERR_ARG (null @p newcomm,
 *         negative @p count, null @p array_of_streams with count > 0, an entry that is not a
 *         live stream: the message names it, e.g. array_of_streams[2]), MPI_ERR_OTHER (another
 *         rank passed a bad argument: no rank gets a communicator).
 */
int MPIX_Stream_comm_create_multiplex(MPI_Comm comm, int count, MPIX_Stream array_of_streams[],
                                      MPI_Comm *newcomm);

/**
 * Returns the stream attached to @p comm (MPIX_STREAM_NULL if none). On a multiplex
 * communicator @p idx selects this rank's stream (0..count-1); elsewhere it must be 0 or -1.
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG (null @p stream, @p idx out of range: MPICH
 *         returns MPIX_STREAM_NULL there).
 */
int MPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream);

/**
 * MPI_Send from this rank's stream @p source_stream_index to stream @p dest_stream_index of
 * @p dest on the multiplex communicator @p comm (MPICH 4.2). A host call, as in MPICH: it returns
 * once the buffer may be reused. The local stream, if it syncs plain calls (a GPU stream; see
 * mpix_sync_plain_calls at the top), is first synchronised (everything enqueued on it so far
 * has executed; MPICH does not do that).
 * @p dest may be MPI_PROC_NULL.
 * @return MPI_SUCCESS, MPI_ERR_COMM (null comm, not a multiplex communicator), MPI_ERR_COUNT,
 *         MPI_ERR_TYPE, MPI_ERR_BUFFER, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_ARG (an index
 *         negative or out of range for this rank or for @p dest; the message names it), or the
 *         MPI library's error class.
 */
int MPIX_Stream_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, int source_stream_index, int dest_stream_index);

/**
 * Nonblocking MPIX_Stream_send: @p request is an ordinary MPI request (MPI_Wait / MPI_Test;
 * its failures are returned, MPI_ERRORS_RETURN). Errors as MPIX_Stream_send, plus MPI_ERR_ARG
 * for a null @p request.
 */
int MPIX_Stream_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, int source_stream_index, int dest_stream_index,
                      MPI_Request *request);

/**
 * MPI_Recv into this rank's stream @p dest_stream_index from stream @p source_stream_index of
 * @p source (MPI_ANY_SOURCE: any rank's stream of that index; MPI_ANY_TAG allowed). A host
 * call; the local stream is synchronised first as for MPIX_Stream_send. Errors as
 * MPIX_Stream_send.
 */
int MPIX_Stream_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, int source_stream_index, int dest_stream_index,
                     MPI_Status *status);

/** Nonblocking MPIX_Stream_recv; see MPIX_Stream_isend. */
int MPIX_Stream_irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, int source_stream_index, int dest_stream_index,
                      MPI_Request *request);

/**
 * Large-count variants of the four calls above (MPICH 4.2's _c names): @p count is an
 * MPI_Count, up to INT_MAX (beyond: MPI_ERR_COUNT; mpix calls MPI's int-count interface).
 */
int MPIX_Stream_send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, int source_stream_index, int dest_stream_index);
int MPIX_Stream_isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, int source_stream_index, int dest_stream_index,
                        MPI_Request *request);
int MPIX_Stream_recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, int source_stream_index, int dest_stream_index,
                       MPI_Status *status);
int MPIX_Stream_irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, int source_stream_index, int dest_stream_index,
                        MPI_Request *request);

/**
 * Makes progress on @p stream (MPICH 4.2; MPIX_STREAM_NULL: the MPI library's default
 * progress). mpix's agent drives enqueued ops without it; the call writes the stream's deferred
 * trigger (mpix_defer_trigger) and polls the MPI library once.
 * @return MPI_SUCCESS, MPI_ERR_ARG (a handle that is not a live stream), MPI_ERR_OTHER (MPI not
 *         initialised).
 */
int MPIX_Stream_progress(MPIX_Stream stream);

/**
 * Starts a thread that polls the MPI library's progress for @p stream (MPICH 4.2; MPIX_STREAM_NULL
 * allowed) until MPIX_Stop_progress_thread or MPI_Finalize. A second start for the same stream
 * is a no-op. @return MPI_SUCCESS, MPI_ERR_ARG (not a live stream), MPI_ERR_OTHER (the thread
 * cannot be started, MPI not initialised or below MPI_THREAD_MULTIPLE).
 */
int MPIX_Start_progress_thread(MPIX_Stream stream);

/**
 * Stops and joins the progress thread of @p stream; a no-op if none runs (as MPICH).
 * @return MPI_SUCCESS, MPI_ERR_ARG (not a live stream).
 */
int MPIX_Stop_progress_thread(MPIX_Stream stream);

/**
 * Blocks the calling thread until everything enqueued on @p stream so far has executed
 * (cudaStreamSynchronize / hipStreamSynchronize / host-stream drain). An mpix addition.
 * If an enqueued blocking op of the stream (MPIX_Send_enqueue, MPIX_Allreduce_enqueue, or
 * MPIX_Recv_enqueue with MPI_STATUS_IGNORE: a receive with a status gets its error there), or
 * an op waited for with MPIX_Wait_enqueue / MPIX_Waitall_enqueue and MPI_STATUS(ES)_IGNORE,
 * failed after its call returned, the first such failure since the last
 * synchronize is returned here, once: an error code whose MPI_Error_class is the failure's
 * class and whose MPI_Error_string names the call and the cause (MPI_COMM_WORLD's error
 * handler is called with it). The next host wait (MPI_Wait / MPI_Test) on a request of the
 * stream reports it once too, and MPIX_Stream_get_error keeps it until read.
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad handle), MPI_ERR_OTHER (backend error), or the error
 *         code of a failed blocking op.
 */
int MPIX_Stream_synchronize(MPIX_Stream stream);

/**
 * The sticky error of @p stream: the error code of the first enqueued blocking op of the
 * stream that failed after its call returned (see MPIX_Stream_synchronize), or MPI_SUCCESS.
 * Reading it clears it. An mpix addition.
 * @param errorcode the code (MPI_Error_class / MPI_Error_string take it apart).
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad handle, null @p errorcode).
 */
int MPIX_Stream_get_error(MPIX_Stream stream, int *errorcode);

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
 * MPI_Cancel on it (or on any request of an *_enqueue call) before it has completed returns
 * MPI_ERR_UNSUPPORTED_OPERATION: an enqueued op is not withdrawn from its stream; it stays
 * valid and completes normally.
 */
int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request);

/** Enqueues a nonblocking receive; see MPIX_Isend_enqueue and MPIX_Recv_enqueue. */
int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Request *request);

/**
 * Enqueues MPI_Sendrecv on the stream of @p comm (an mpix addition, with MPI_Sendrecv's
 * arguments): when the stream reaches the call, the receive and the send are both posted; the
 * stream goes on once both have completed (the data has left @p sendbuf and landed in
 * @p recvbuf). The host thread does not wait. A ring or halo exchange of these cannot deadlock:
 * nothing waits between the two halves. @p dest and @p source may be MPI_PROC_NULL, @p source
 * MPI_ANY_SOURCE and @p recvtag MPI_ANY_TAG. The buffers must not overlap. @p status (or
 * MPI_STATUS_IGNORE) describes the receive and is filled in stream order: read it after the
 * stream has passed this point (e.g. after MPIX_Stream_synchronize).
 * @return MPI_SUCCESS, MPI_ERR_COMM (null comm / no stream), MPI_ERR_COUNT, MPI_ERR_TYPE,
 *         MPI_ERR_BUFFER (null buffer with count > 0, sendbuf == recvbuf), MPI_ERR_RANK,
 *         MPI_ERR_TAG, MPI_ERR_OTHER; the message names the argument (sendcount, recvtype,
 *         dest, ...). Nothing is enqueued when an argument is wrong.
 */
int MPIX_Sendrecv_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status);

/**
 * Makes the stream of the request's communicator wait until @p request completes, then sets
 * @p *request to MPI_REQUEST_NULL (MPI_REQUEST_NULL is accepted and is a no-op). @p status is
 * filled in stream order.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null pointer), MPI_ERR_REQUEST (not an mpix enqueue request).
 */
int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status);

/**
 * MPIX_Wait_enqueue for each of @p count requests (MPI_REQUEST_NULL entries allowed).
 * @p array_of_statuses is declared as a pointer, not an array: with MPICH, whose
 * MPI_STATUSES_IGNORE is (MPI_Status *)1, GCC 12 warns (-Wstringop-overflow) at every call that
 * passes MPI_STATUSES_IGNORE to an array parameter. The type is the same.
 */
int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses);

/**
 * Enqueues an allreduce on the stream of @p comm (MPI_IN_PLACE allowed as @p sendbuf): it
 * starts when the stream reaches it, and the stream goes on once the result is in @p recvbuf.
 * The host thread does not wait. A collective: every rank enqueues its collectives on @p comm
 * in the same order, and no host collective on @p comm may run while an enqueued one can be in
 * flight. A user-defined @p op must stay allocated (no MPI_Op_free) until the stream has passed
 * the call; a derived @p datatype may be freed at once.
 * @return MPI_SUCCESS, MPI_ERR_COMM (null comm / no stream), MPI_ERR_COUNT, MPI_ERR_TYPE,
 *         MPI_ERR_OP (MPI_OP_NULL, or a predefined op the MPI library does not define for
 *         @p datatype: Open MPI refuses predefined ops on derived datatypes), MPI_ERR_BUFFER
 *         (null buffer with count > 0, recvbuf MPI_IN_PLACE, sendbuf == recvbuf),
 *         MPI_ERR_ARG (MPI_IN_PLACE on an intercommunicator), MPI_ERR_OTHER.
 */
int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm);

/* ----------------------------------------------------------------------------------------- */
/* HPE Cray MPICH-compatible queue API (stream-triggered point-to-point)                      */
/* ----------------------------------------------------------------------------------------- */

/** Opaque queue handle (HPE Cray MPICH-compatible). */
typedef struct mpix_queue_s *MPIX_Queue;
/** The null queue handle. */
#define MPIX_QUEUE_NULL ((MPIX_Queue)0)

/**
 * Creates a queue bound to a stream. Operations enqueued on the queue run in FIFO order, in the
 * order of @p stream: MPIX_Enqueue_start fires every operation enqueued since the previous
 * start once the stream reaches the start; MPIX_Enqueue_wait makes the stream wait until every
 * started operation has completed. Several queues may share one stream.
 *
 * What @p stream is, decided in this order (no info argument exists to say it):
 *  1. NULL and @p comm is a stream communicator: the communicator's stream (a general stream's
 *     host stream).
 *  2. NULL otherwise: a host stream that mpix creates and owns (freed with the queue).
 *  3. @p comm is a stream communicator: a native stream of the same kind as the communicator's.
 *  4. A live mpix_host_stream_t (the handle is looked up, never dereferenced blindly).
 *  5. Otherwise a GPU stream: cudaStream_t if the CUDA backend is built (checked with the
 *     runtime, which refuses an invalid handle), else hipStream_t if the HIP backend is built.
 *     MPIX_QUEUE_STREAM=cudaStream_t|hipStream_t|mpix_host_stream overrides 3-5.
 *
 * The queue does not own a stream passed in; keep it alive until the queue is freed.
 * @return MPI_SUCCESS, MPI_ERR_COMM (MPI_COMM_NULL), MPI_ERR_ARG (null @p queue, a handle that
 *         is none of the kinds above), MPI_ERR_UNSUPPORTED_OPERATION (the stream's backend is
 *         not built or has no device), MPI_ERR_OTHER (the MPI library runs below
 *         MPI_THREAD_MULTIPLE).
 */
int MPIX_Create_queue(MPI_Comm comm, void *stream, MPIX_Queue *queue);

/**
 * Frees a queue (not its stream). Waits for the queue's own work on the stream to drain.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null or already freed handle), MPI_ERR_PENDING (operations
 *         enqueued on the queue have not completed, or were never started; nothing is freed).
 */
int MPIX_Free_queue(MPIX_Queue queue);

/**
 * Enqueues a send on @p queue. It is posted once the stream reaches the next MPIX_Enqueue_start
 * of the queue; the buffer is read then. @p request is a real MPI request (generalized request):
 * complete or free it on the host with MPI_Wait / MPI_Test / MPI_Request_free as any request
 * (after the stream has passed MPIX_Enqueue_wait it is already complete).
 * @p comm carries the message: any communicator with provider mpi; a stream communicator with
 * other providers. Buffers may be host (pageable or pinned), device or managed memory; device
 * and managed buffers go through pinned bounce buffers in the queue's stream order, as on the
 * stream API: a send's copy out at its MPIX_Enqueue_start, a receive's copy in right after its
 * completion in MPIX_Enqueue_wait (or on the host, by MPI_Wait / MPI_Test, if that comes first).
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad queue, null @p request), MPI_ERR_COMM, MPI_ERR_COUNT,
 *         MPI_ERR_TYPE, MPI_ERR_BUFFER, MPI_ERR_RANK, MPI_ERR_TAG.
 */
int MPIX_Enqueue_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPIX_Queue queue, MPI_Request *request);

/**
 * Enqueues a receive on @p queue; posted once the stream reaches the next MPIX_Enqueue_start,
 * so its buffer is never written before that. MPI_ANY_SOURCE / MPI_ANY_TAG are accepted (HPE's
 * implementation refuses them). Otherwise as MPIX_Enqueue_send.
 */
int MPIX_Enqueue_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPIX_Queue queue, MPI_Request *request);

/**
 * Enqueues a trigger on the queue's stream: when the stream reaches it, every operation
 * enqueued on @p queue since the previous start is posted. Non-blocking for the host. A start
 * with nothing enqueued costs one stream write.
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad queue), MPI_ERR_OTHER (backend error).
 */
int MPIX_Enqueue_start(MPIX_Queue queue);

/**
 * Enqueues a wait on the queue's stream: work enqueued on the stream afterwards runs once every
 * operation started on @p queue (by an earlier MPIX_Enqueue_start) has completed. Operations
 * enqueued after the last start are not covered. A no-op when nothing was started since the
 * last wait. Non-blocking for the host.
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad queue), MPI_ERR_OTHER (backend error).
 */
int MPIX_Enqueue_wait(MPIX_Queue queue);

/* ----------------------------------------------------------------------------------------- */
/* MPI-4 partitioned communication, host- and kernel-triggered                                */
/* ----------------------------------------------------------------------------------------- */

/**
 * Persistent partitioned request owned by mpix (not an MPI_Request: the underlying MPI cannot
 * start or wait on a request it did not make, and a distinct type turns MPI_Wait(&preq) into a
 * compile error instead of a crash).
 */
typedef struct mpix_request_s *MPIX_Request;
/** The null partitioned request. */
#define MPIX_REQUEST_NULL ((MPIX_Request)0)
/** A partitioned request exported to GPU kernels (see mpix/mpix_device.h). */
typedef struct mpix_prequest_s *MPIX_Prequest;
/** The null device request. */
#define MPIX_PREQUEST_NULL ((MPIX_Prequest)0)

/**
 * Initialises a persistent partitioned send of @p partitions partitions of @p count elements
 * each, starting at @p buf, to @p dest with @p tag on @p comm (MPI-4 MPI_Psend_init).
 *
 * Matching: the k-th partitioned send from this process to @p dest with @p tag on @p comm
 * matches the k-th partitioned receive posted there from this process with that tag; the
 * receiver may use a different partition count (same total size; no partition boundary of the
 * sender may split a receive element). Traffic goes over a private duplicate of @p comm, so it
 * never matches ordinary messages. Deviation from MPI-4: the FIRST partitioned init on a
 * communicator is collective over it (mpix makes that duplicate; MPI has no tag space reserved
 * for libraries); later inits on it are local.
 *
 * Each partition travels as one message of the provider in use (MPIX_PROVIDER). A device or
 * managed buffer is staged through pinned host bounce buffers where the provider cannot read
 * device memory, as for every other operation: the agent copies a partition out once it is
 * marked ready, and a received one in before it is marked arrived. @p info is accepted and
 * ignored (MPI_INFO_NULL is fine).
 * @return MPI_SUCCESS, MPI_ERR_COMM (null or intercommunicator), MPI_ERR_COUNT (negative,
 *         or a partition of more than INT_MAX elements), MPI_ERR_ARG (negative partitions,
 *         null @p request), MPI_ERR_TYPE (also: a non-contiguous datatype on a device or
 *         managed buffer), MPI_ERR_BUFFER (null), MPI_ERR_RANK, MPI_ERR_TAG (wildcards are not
 *         allowed; or a tag the provider cannot carry).
 */
int MPIX_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPIX_Request *request);

/** Initialises a persistent partitioned receive (MPI-4 MPI_Precv_init); see MPIX_Psend_init. */
int MPIX_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPIX_Request *request);

/**
 * Starts a round of @p *request (it becomes active). A receive may be written from now on.
 * @return MPI_SUCCESS, MPI_ERR_ARG (@p request is a NULL pointer), MPI_ERR_REQUEST
 *         (MPIX_REQUEST_NULL, freed or already active request; or its last round was completed
 *         with MPIX_Pwait_enqueue and the stream has not reached that wait yet: synchronise
 *         the stream or use MPIX_Start_enqueue).
 */
int MPIX_Start(MPIX_Request *request);

/** MPIX_Start on each of @p count requests; checks them all before starting any.
 *  MPI_ERR_ARG for a NULL @p array_of_requests with @p count > 0. */
int MPIX_Startall(int count, MPIX_Request array_of_requests[]);

/**
 * Marks send partition @p partition of the active round ready: it is sent as soon as the mpix
 * agent sees the mark. Thread-safe for distinct partitions.
 * @return MPI_SUCCESS, MPI_ERR_REQUEST (bad handle, a receive request, an inactive request),
 *         MPI_ERR_ARG (partition out of range, or already marked ready in this round).
 */
int MPIX_Pready(int partition, MPIX_Request request);

/** MPIX_Pready for partitions @p partition_low .. @p partition_high (inclusive); all are
 *  checked before any is marked. */
int MPIX_Pready_range(int partition_low, int partition_high, MPIX_Request request);

/** MPIX_Pready for the @p length partitions listed; all are checked before any is marked. */
int MPIX_Pready_list(int length, const int array_of_partitions[], MPIX_Request request);

/**
 * Sets @p *flag to true once receive partition @p partition of the active round has arrived
 * (its data may be read; the request still has to be completed).
 * @return MPI_SUCCESS, MPI_ERR_REQUEST (bad handle, a send request, an inactive request),
 *         MPI_ERR_ARG (partition out of range, null @p flag).
 */
int MPIX_Parrived(MPIX_Request request, int partition, int *flag);

/**
 * Waits until the active round of @p *request completes; the request becomes inactive and stays
 * allocated (persistent). An inactive or MPIX_REQUEST_NULL request returns at once with an
 * empty status. A misuse recorded by a device (see mpix_device.h) fails the round: it is
 * reported here once, the request becomes inactive, and what was not yet transferred is
 * abandoned (so a misuse that stalls the round never hangs the wait).
 * @return MPI_SUCCESS, MPI_ERR_ARG (@p request is a NULL pointer; device partition out of
 *         range or double ready), MPI_ERR_REQUEST (bad handle; device-side misuse),
 *         MPI_ERR_TRUNCATE / MPI_ERR_COUNT / MPI_ERR_TYPE (sender and receiver sizes do not
 *         fit; also in status->MPI_ERROR; the sender's messages are taken and dropped, so its
 *         rounds still complete).
 */
int MPIX_Wait(MPIX_Request *request, MPI_Status *status);

/** Non-blocking MPIX_Wait: @p *flag is true once the round has completed. */
int MPIX_Test(MPIX_Request *request, int *flag, MPI_Status *status);

/**
 * How @p request's rounds travel (docs/partitioned.md, "Direct rounds"): @p *direct is 1 where
 * they go direct (one GPU-to-GPU copy by the sender's stream per round), 0 where the agents
 * carry each partition as a message, -1 while that is not yet known (before the peer's header
 * or answer is in); @p *host_steps counts the rounds a host thread of mpix's has worked on so
 * far (each round the agent carried, each direct round pushed by MPIX_Wait / MPIX_Test): 0
 * for direct rounds driven by streams. Either pointer may be NULL.
 * @return MPI_SUCCESS, MPI_ERR_REQUEST (bad handle).
 */
int MPIX_Request_get_path(MPIX_Request request, int *direct, MPI_Count *host_steps);

/**
 * Frees an inactive request and sets @p *request to MPIX_REQUEST_NULL. A request whose last
 * round was completed with MPIX_Pwait_enqueue is released once its stream has passed that wait.
 * @return MPI_SUCCESS, MPI_ERR_ARG (@p request is a NULL pointer), MPI_ERR_REQUEST
 *         (MPIX_REQUEST_NULL, unknown or active request). A request still active at
 *         MPI_Finalize is reported in the log.
 */
int MPIX_Request_free(MPIX_Request *request);

/**
 * Exports @p request to GPU kernels: @p *prequest is valid in device code of the CUDA (or HIP)
 * device current at the call, and stays valid across rounds until MPIX_Prequest_free. Without
 * a GPU backend, or when the request's communicator is a stream communicator of a host (or
 * general) stream, it is for host threads (host functions on that stream) through the same
 * header instead.
 * @return MPI_SUCCESS, MPI_ERR_REQUEST (bad handle; or, on CUDA device memory, a send with a
 *         partition marked by MPIX_Pready_enqueue in its active round whose device marks
 *         MPIX_Pready_enqueue could not make), MPI_ERR_ARG (null @p prequest), MPI_ERR_NO_MEM.
 */
int MPIX_Prequest_create(MPIX_Request request, MPIX_Prequest *prequest);

/**
 * Frees a device request (call after the kernels that use it have finished, and, on CUDA,
 * once the streams have passed the request's last MPIX_Start_enqueue / MPIX_Pwait_enqueue,
 * which write the device copy of its round kept in the request's device memory) and sets
 * @p *prequest to MPIX_PREQUEST_NULL.
 * @return MPI_SUCCESS, MPI_ERR_ARG (null or unknown handle).
 */
int MPIX_Prequest_free(MPIX_Prequest *prequest);

/**
 * The copy of @p prequest's descriptor that host code reads. A device request on CUDA lives in
 * device memory, where a host thread cannot read it; mpix keeps a host copy, and the host build
 * of mpix/mpix_device.h calls this first in each of its calls, so host threads may use the
 * same MPIX_Prequest as kernels. Returns @p prequest itself where the descriptor is in host
 * memory, and MPIX_PREQUEST_NULL for a handle that is not a live device request.
 */
MPIX_Prequest MPIX_Prequest_host_view(MPIX_Prequest prequest);

/**
 * Called by the host build of mpix/mpix_device.h (not meant to be called directly): a host
 * thread marked send partitions @p low .. @p high ready with round value @p mark through
 * @p view, a host view (MPIX_Prequest_host_view) whose descriptor has device_data; copies the
 * marks to the request's device marks, which its direct rounds wait for (docs/partitioned.md,
 * "Direct rounds"), and returns once the device holds them.
 * @return MPI_SUCCESS, MPI_ERR_ARG (@p view is no host view of a live device request, or the
 *         range is outside its partitions), or the class of a failed copy.
 */
int MPIX_Prequest_host_marked(MPIX_Prequest view, int low, int high, uint64_t mark);

/**
 * Starts a round of @p *request in stream order, on the stream of the request's communicator
 * (which must be a stream communicator): the round becomes active, for kernels and for the
 * network, when the stream reaches this point. For the host the request is active at once.
 * @return MPI_SUCCESS, MPI_ERR_ARG (NULL @p request), MPI_ERR_REQUEST (bad handle, active
 *         request), MPI_ERR_COMM (the request's communicator has no stream).
 */
int MPIX_Start_enqueue(MPIX_Request *request);

/**
 * Completes the active round of @p *request in stream order: work enqueued afterwards on the
 * communicator's stream runs once the round has completed. For the host the request is
 * inactive at once (restart it with MPIX_Start_enqueue). Named apart from MPIX_Wait_enqueue,
 * which takes an MPI_Request. @p status is filled in stream order (may be MPI_STATUS_IGNORE).
 * @return MPI_SUCCESS, MPI_ERR_ARG (NULL @p request), MPI_ERR_REQUEST (bad handle, inactive
 *         request), MPI_ERR_COMM.
 */
int MPIX_Pwait_enqueue(MPIX_Request *request, MPI_Status *status);

/**
 * Marks send partition @p partition of the active round ready in stream order, on the stream of
 * the request's communicator (a stream communicator): the mark is written when the stream gets
 * here, so the partition carries what the work enqueued before this call wrote (a kernel that
 * knows nothing of mpix). With MPIX_Start_enqueue and MPIX_Pwait_enqueue this is a persistent
 * send driven by the stream (MPI_Send_init / MPI_Start in stream order); on direct rounds
 * (docs/partitioned.md) no host thread works on its rounds. Checked on the host at the call,
 * as MPIX_Pready: a partition already marked in this round, by the host or by an earlier
 * MPIX_Pready_enqueue, is refused (a kernel's MPIX_Pready of the same partition in the same
 * round is an error the host cannot see). On CUDA device memory of the current GPU the first
 * call makes the send's device marks (as MPIX_Prequest_create does), which its direct rounds
 * then wait for in device memory.
 * @return MPI_SUCCESS, MPI_ERR_REQUEST (bad handle, a receive request, an inactive request),
 *         MPI_ERR_ARG (partition out of range, or already marked ready in this round),
 *         MPI_ERR_COMM (the request's communicator has no stream).
 */
int MPIX_Pready_enqueue(int partition, MPIX_Request request);

/** MPIX_Pready_enqueue for partitions @p partition_low .. @p partition_high (inclusive), in one
 *  stream call; all are checked before any is marked. */
int MPIX_Pready_range_enqueue(int partition_low, int partition_high, MPIX_Request request);

/** MPIX_Pready_enqueue for the @p length partitions listed, in one stream call; all are checked
 *  before any is marked. */
int MPIX_Pready_list_enqueue(int length, const int array_of_partitions[], MPIX_Request request);

/**
 * MPIX_Start_enqueue on each of @p count requests, in array order; every request is checked
 * before any is started. Where all are on one stream (the requests of one stream
 * communicator), their stream operations go to the stream in ONE call (one
 * cuStreamBatchMemOp on a CUDA stream, which costs the host microseconds each), so a halo
 * exchange's sends and receives start for the price of one.
 * @return as MPIX_Start_enqueue, for the first request that fails (named in the log); also
 *         MPI_ERR_ARG (NULL @p array_of_requests with @p count > 0), MPI_ERR_COUNT (negative
 *         @p count) and MPI_ERR_REQUEST (a request named twice).
 */
int MPIX_Startall_enqueue(int count, MPIX_Request array_of_requests[]);

/**
 * MPIX_Pwait_enqueue on each of @p count requests, in array order, in one stream call where
 * all are on one stream (as MPIX_Startall_enqueue). MPIX_REQUEST_NULL entries are skipped
 * with an empty status. @p array_of_statuses may be MPI_STATUSES_IGNORE.
 * @return as MPIX_Pwait_enqueue; also MPI_ERR_ARG (NULL @p array_of_requests with
 *         @p count > 0), MPI_ERR_COUNT (negative @p count) and MPI_ERR_REQUEST (a request named
 *         twice; an inactive request: then no wait is enqueued).
 */
int MPIX_Pwaitall_enqueue(int count, MPIX_Request array_of_requests[],
                          MPI_Status array_of_statuses[]);

#ifdef __cplusplus
}
#endif

#endif /* MPIX_MPIX_H */
