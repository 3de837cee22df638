/**
 * @file mpix_host_stream.h
 * @brief A host "stream": an in-order queue of work run by a worker thread.
 *
 * It gives machines without a GPU the same programming model as a CUDA/HIP stream: launch a
 * host function, write a 64-bit value, wait until a 64-bit value is reached, synchronize. Pass
 * one to MPIX_Stream_create with info "type" = "mpix_host_stream" and "value" = the handle
 * encoded with MPIX_Info_set_hex.
 *
 * All calls return 0 on success and an MPI error class on failure (MPI_ERR_ARG for a null or
 * destroyed stream / null argument).
 */
#ifndef MPIX_MPIX_HOST_STREAM_H
#define MPIX_MPIX_HOST_STREAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque host stream handle. */
typedef struct mpix_host_stream_s *mpix_host_stream_t;

/** Host function run in stream order on the stream's worker thread. */
typedef void (*mpix_host_fn_t)(void *arg);

/**
 * Creates a host stream and its worker thread.
 * @return 0, MPI_ERR_ARG (null @p stream, or a bad MPIX_* setting), MPI_ERR_OTHER (the worker
 *         thread could not be started), MPI_ERR_NO_MEM; @p *stream is untouched on error.
 */
int mpix_host_stream_create(mpix_host_stream_t *stream);

/**
 * Waits for everything enqueued to run, stops the worker and frees the stream.
 * Sets @p *stream to NULL. The stream must not be attached to a live MPIX_Stream: if it is,
 * every later mpix call that would use that MPIX_Stream (enqueues, waits, synchronize) fails
 * with MPI_ERR_ARG and enqueues nothing; the MPIX_Stream and its communicators can still be
 * freed.
 */
int mpix_host_stream_destroy(mpix_host_stream_t *stream);

/** Enqueues @p fn(@p arg). Host functions must not block on later work of the same stream. */
int mpix_host_stream_launch(mpix_host_stream_t stream, mpix_host_fn_t fn, void *arg);

/** Blocks until all work enqueued so far has run. */
int mpix_host_stream_synchronize(mpix_host_stream_t stream);

/** Enqueues a store of @p value to @p *addr (release ordering). */
int mpix_host_stream_write_value64(mpix_host_stream_t stream, uint64_t *addr, uint64_t value);

/**
 * Enqueues a wait: later work runs once (int64_t)(*addr - value) >= 0 (the cyclic
 * "greater or equal" comparison of CU_STREAM_WAIT_VALUE_GEQ).
 */
int mpix_host_stream_wait_value64(mpix_host_stream_t stream, const uint64_t *addr, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif /* MPIX_MPIX_HOST_STREAM_H */
