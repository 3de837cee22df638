/**
 * @file mpix_device.h
 * @brief Device-side partitioned calls for CUDA and HIP kernels (header only, C++).
 *
 * A kernel marks send partitions ready and polls receive partitions through an MPIX_Prequest
 * made on the host with MPIX_Prequest_create:
 *
 * @code
 *   __global__ void produce(double *buf, MPIX_Prequest preq) {   // one block per partition
 *     compute(buf + blockIdx.x * PART, PART);
 *     __syncthreads();                                  // the whole partition is written
 *     if (threadIdx.x == 0) MPIX_Pready(blockIdx.x, preq);
 *   }
 *   __global__ void consume(const double *buf, MPIX_Prequest preq) {
 *     if (threadIdx.x == 0) { int f = 0; while (!f) MPIX_Parrived(preq, blockIdx.x, &f); }
 *     __syncthreads();
 *     use(buf + blockIdx.x * PART, PART);
 *   }
 * @endcode
 *
 * Rules (device code cannot return errors to the host, so misuse is recorded in the request
 * and reported, with the partition and the MPI error class, by the next host MPIX_Wait /
 * MPIX_Test on it; the device calls also return that class):
 *  - Call MPIX_Pready from ONE thread, after the partition's writes by the other threads are
 *    visible to it (e.g. __syncthreads() when one block wrote it). It issues a system-scope
 *    fence (__threadfence_system), so the data reaches host-visible memory before the ready
 *    mark does. Cost: the fence waits for the calling thread's (and, through the barrier, its
 *    block's) outstanding writes to become visible system-wide; then one 8-byte store to host
 *    memory. docs/results-partitioned.md gives the measured cost. MPIX_Pready_range pays one
 *    fence for the whole range.
 *  - Partition out of range: nothing is marked; MPI_ERR_ARG recorded.
 *  - Request not active (not started, or its round completed): MPI_ERR_REQUEST recorded.
 *  - The same partition marked twice in one round: MPI_ERR_ARG recorded (detected when the
 *    calls are ordered; two threads racing on one partition may go unnoticed).
 *  - MPIX_Pready on a receive request / MPIX_Parrived on a send request: MPI_ERR_REQUEST.
 *  - MPIX_Parrived on an inactive request sets *flag = 1 (so a polling kernel never hangs) and
 *    records MPI_ERR_REQUEST unless the partition arrived in the round that just completed.
 *
 * Partition buffers live in host-accessible memory (pinned with cudaHostAlloc / hipHostMalloc,
 * or managed): the network reads and writes them from the host.
 *
 * Compiled by a plain C++ compiler (no nvcc / hipcc) the same calls are ordinary inline host
 * functions, so host threads can drive an MPIX_Prequest too (mpix's CI tests them that way).
 */
#ifndef MPIX_MPIX_DEVICE_H
#define MPIX_MPIX_DEVICE_H

#ifndef __cplusplus
#error "mpix_device.h is for C++ (CUDA / HIP kernels, or host C++)"
#endif

#include <stdint.h>

#include "mpix/mpix.h"

/** Marks a valid device request (guards against stale or forged handles on the host). */
#define MPIX_PREQUEST_MAGIC 0x6d70697870726571ULL

/** Kinds of device-side misuse recorded in mpix_prequest_s::error. */
enum mpix_prequest_error {
  MPIX_PREQ_ERR_RANGE = 1,     /**< partition out of range (MPI_ERR_ARG) */
  MPIX_PREQ_ERR_INACTIVE = 2,  /**< request not active (MPI_ERR_REQUEST) */
  MPIX_PREQ_ERR_DOUBLE = 3,    /**< partition marked ready twice in one round (MPI_ERR_ARG) */
  MPIX_PREQ_ERR_SIDE = 4       /**< Pready on a receive / Parrived on a send (MPI_ERR_REQUEST) */
};

/**
 * Layout of a device request, in host memory the device can read (mpix allocates it). Rounds
 * are numbered with values that only grow: round r of the request is R = base + 2r. While it is
 * active *round == R - 1; once it completed *round == R. A partition word holds R once the
 * partition is ready (send) or has arrived (receive) in round r. Every word starts at or below
 * base, so no word ever has to go down (stream waits compare cyclically, DESIGN.md §7).
 */
struct mpix_prequest_s {
  uint64_t magic;          /**< MPIX_PREQUEST_MAGIC while valid */
  uint64_t base;           /**< round numbering base (even) */
  uint64_t *round;         /**< R - 1 while round r is active, R once it completed */
  uint64_t *error;         /**< > base once misuse is recorded: base + 1 + (kind << 32 |
                                partition) of the first one */
  uint64_t *const *words;  /**< per partition: ready (send) or arrived (receive) word */
  int32_t partitions;
  int32_t is_send;
};

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define MPIX_DEVICE_FN static __device__ __forceinline__
#define MPIX_DEVICE_FENCE_SYSTEM() __threadfence_system()
/* Volatile accesses reach host memory each time; the fences order them against data. */
#define MPIX_DEVICE_LOAD(p) (*(volatile const uint64_t *)(p))
#define MPIX_DEVICE_STORE(p, v) (*(volatile uint64_t *)(p) = (v))
#else
#define MPIX_DEVICE_FN static inline
#define MPIX_DEVICE_FENCE_SYSTEM() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define MPIX_DEVICE_LOAD(p) __atomic_load_n((const uint64_t *)(p), __ATOMIC_ACQUIRE)
#define MPIX_DEVICE_STORE(p, v) __atomic_store_n((uint64_t *)(p), (uint64_t)(v), __ATOMIC_RELEASE)
#endif

/** Records the first misuse of @p preq; returns its MPI error class. */
MPIX_DEVICE_FN int mpix_prequest_fail(MPIX_Prequest preq, int kind, int partition) {
  if ((int64_t)(MPIX_DEVICE_LOAD(preq->error) - preq->base) <= 0)
    MPIX_DEVICE_STORE(preq->error,
                      preq->base + 1 + (((uint64_t)kind << 32) | (uint32_t)partition));
  return (kind == MPIX_PREQ_ERR_RANGE || kind == MPIX_PREQ_ERR_DOUBLE) ? MPI_ERR_ARG
                                                                        : MPI_ERR_REQUEST;
}

/** The R of the active round, or 0 (and the misuse recorded) if the request is not active. */
MPIX_DEVICE_FN uint64_t mpix_prequest_active_round(MPIX_Prequest preq, int partition) {
  uint64_t g = MPIX_DEVICE_LOAD(preq->round);
  if (((g - preq->base) & 1u) == 0) {
    mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, partition);
    return 0;
  }
  return g + 1;
}

/** Checks a send partition before it is marked; MPI_SUCCESS or the class recorded. */
MPIX_DEVICE_FN int mpix_prequest_check_ready(MPIX_Prequest preq, int partition, uint64_t r) {
  if (partition < 0 || partition >= preq->partitions)
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, partition);
  if ((int64_t)(MPIX_DEVICE_LOAD(preq->words[partition]) - r) >= 0)
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_DOUBLE, partition);
  return MPI_SUCCESS;
}

/**
 * Marks send partition @p partition ready (device MPI_Pready). Call from one thread once the
 * partition is written; see the rules above.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Pready(int partition, MPIX_Prequest preq) {
  if (!preq->is_send) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, partition);
  uint64_t r = mpix_prequest_active_round(preq, partition);
  if (!r) return MPI_ERR_REQUEST;
  int rc = mpix_prequest_check_ready(preq, partition, r);
  if (rc != MPI_SUCCESS) return rc;
  MPIX_DEVICE_FENCE_SYSTEM();  // the partition's data before its ready mark
  MPIX_DEVICE_STORE(preq->words[partition], r);
  return MPI_SUCCESS;
}

/**
 * Marks send partitions @p low .. @p high (inclusive) ready with one fence. All are checked
 * before any is marked.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Pready_range(int low, int high, MPIX_Prequest preq) {
  if (!preq->is_send) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, low);
  uint64_t r = mpix_prequest_active_round(preq, low);
  if (!r) return MPI_ERR_REQUEST;
  if (low > high) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, low);
  for (int p = low; p <= high; ++p) {
    int rc = mpix_prequest_check_ready(preq, p, r);
    if (rc != MPI_SUCCESS) return rc;
  }
  MPIX_DEVICE_FENCE_SYSTEM();
  for (int p = low; p <= high; ++p) MPIX_DEVICE_STORE(preq->words[p], r);
  return MPI_SUCCESS;
}

/**
 * Sets @p *flag to 1 once receive partition @p partition of the active round has arrived, else
 * 0 (device MPI_Parrived). Data read after a true flag is the arrived data.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Parrived(MPIX_Prequest preq, int partition, int *flag) {
  if (preq->is_send) {
    *flag = 1;
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, partition);
  }
  if (partition < 0 || partition >= preq->partitions) {
    *flag = 1;
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, partition);
  }
  uint64_t g = MPIX_DEVICE_LOAD(preq->round);
  bool active = ((g - preq->base) & 1u) != 0;
  uint64_t r = active ? g + 1 : g;
  bool arrived = g != preq->base &&
                 (int64_t)(MPIX_DEVICE_LOAD(preq->words[partition]) - r) >= 0;
  if (arrived) {
    MPIX_DEVICE_FENCE_SYSTEM();  // the data is read after the arrival mark
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!active) {
    *flag = 1;
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, partition);
  }
  *flag = 0;
  return MPI_SUCCESS;
}

#endif /* MPIX_MPIX_DEVICE_H */
