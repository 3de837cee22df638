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
 *    visible to it (e.g. __syncthreads() when one block wrote it). The ready mark is a
 *    system-scope release store (st.release.sys on CUDA), so the partition's data reaches
 *    host-visible memory before the mark does. Cost on CUDA: two 8-byte loads from device
 *    memory (the descriptor keeps device copies of the round and of each partition's last
 *    mark, so no load crosses to host memory and many blocks calling at once do not queue on
 *    one host word), then the release store, which waits for the block's outstanding writes
 *    to become visible system-wide. Where the send buffer is cudaMalloc memory of the GPU the
 *    descriptor was made on (mpix_prequest_s::device_data), a GPU-scope fence and plain
 *    stores replace the release store: the data never leaves that GPU's memory, which every
 *    reader reaches through the GPU's L2. On HIP the two loads read the host words (one PCIe
 *    round trip). docs/results-partitioned.md gives the measured cost. MPIX_Pready_range pays
 *    one fence for the whole range (and one load per partition for the double-ready check).
 *  - Partition out of range: nothing is marked; MPI_ERR_ARG recorded.
 *  - Request not active (not started, or its round completed): MPI_ERR_REQUEST recorded.
 *  - The same partition marked twice in one round: MPI_ERR_ARG recorded (detected when the
 *    calls are ordered; two threads racing on one partition may go unnoticed; on CUDA a
 *    device mark after a host MPIX_Pready of the same partition is not seen, nor marks made
 *    through two device requests of one request, except where both have device_data: those
 *    share one array of marks with the host's MPIX_Pready).
 *  - MPIX_Pready on a receive request / MPIX_Parrived on a send request: MPI_ERR_REQUEST.
 *  - MPIX_Parrived on an inactive request sets *flag = 1 (so a polling kernel never hangs) and
 *    records MPI_ERR_REQUEST unless the partition arrived in the round that just completed.
 *  - A recorded misuse fails the round: the next host MPIX_Wait / MPIX_Test returns its error
 *    class (once) and leaves the request inactive, abandoning what was not yet transferred.
 *
 * Partition buffers live in pinned host memory (cudaHostAlloc / hipHostMalloc), managed memory
 * or, on CUDA, device memory (mpix stages it, or moves whole rounds GPU to GPU where both sides
 * qualify: docs/partitioned.md, "Direct rounds"). On CUDA the descriptor an MPIX_Prequest points
 * to is in device memory (read once per call, cached); the words it points to are in host
 * memory mapped for the device, with device copies where noted in mpix_prequest_s.
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
  MPIX_PREQ_ERR_RANGE = 1,    /**< partition out of range (MPI_ERR_ARG) */
  MPIX_PREQ_ERR_INACTIVE = 2, /**< request not active (MPI_ERR_REQUEST) */
  MPIX_PREQ_ERR_DOUBLE = 3,   /**< partition marked ready twice in one round (MPI_ERR_ARG) */
  MPIX_PREQ_ERR_SIDE = 4      /**< Pready on a receive / Parrived on a send (MPI_ERR_REQUEST) */
};

/**
 * Layout of a device request, in host memory the device can read (mpix allocates it). Rounds
 * are numbered with values that only grow: round r of the request is R = base + 2r. While it is
 * active *round == R - 1; once it completed *round == R. A partition word holds R once the
 * partition is ready (send) or has arrived (receive) in round r. Every word starts at or below
 * base, so no word ever has to go down (stream waits compare cyclically, DESIGN.md §7).
 */
struct mpix_prequest_s {
  uint64_t magic;         /**< MPIX_PREQUEST_MAGIC while valid */
  uint64_t base;          /**< round numbering base (even) */
  uint64_t *round;        /**< R - 1 while round r is active, R once it completed */
  uint64_t *error;        /**< > base once misuse is recorded: base + 1 + (kind << 32 |
                               partition) of the first one */
  uint64_t *const *words; /**< per partition: ready (send) or arrived (receive) word */
  int32_t partitions;
  int32_t is_send;
  /* Where the descriptor is in device memory (CUDA), copies a kernel reads without crossing
     to host memory; null elsewhere (then the calls read the host words above). */
  uint64_t *dround; /**< the round word's value, kept in step by mpix: in stream order by
                         MPIX_Start_enqueue / MPIX_Pwait_enqueue, before MPIX_Start / MPIX_Wait
                         return otherwise */
  uint64_t *dready; /**< per send partition: the round value a device MPIX_Pready last marked */
  /** Receive requests whose rounds may go direct (docs/partitioned.md, "Direct rounds"): the
      device word the sender's stream sets to R once all of round r has arrived, followed by
      a word mpix sets to 1, in stream order before a round starts, once the request's rounds
      are known to go direct (MPIX_Parrived then reads only device words); null elsewhere
      (then only the partition words say what arrived). */
  uint64_t *darrived;
  /** 1 where the send buffer is device memory of the GPU this descriptor lives on (CUDA) and
      dready is the request's shared device marks (the ones a direct round waits for); 0
      elsewhere. A device MPIX_Pready then orders the partition's writes before its marks with
      a GPU-scope fence, not a system-scope release: data in a GPU's own memory is read by
      every other agent (its copy engines, peers, the host) through that GPU's L2, which the
      GPU-scope fence reaches. */
  int32_t device_data;
  int32_t reserved;
  /** Where dround points on a device descriptor (CUDA): the round's copy, at a fixed place in
      the descriptor, so a kernel loads it together with the other fields, not after them. */
  uint64_t dround_copy;
};

/* Accesses to the request's words, which live in host memory: relaxed loads that reach the
 * host every time, acquire loads (data read afterwards is at least as new), release stores
 * (data written before, by this thread or by threads it synchronised with through a barrier,
 * is visible system-wide before the store) -- all at system scope. */
#if defined(__CUDACC__)
#define MPIX_DEVICE_FN static __device__ __forceinline__
MPIX_DEVICE_FN uint64_t mpix_dev_load(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
MPIX_DEVICE_FN uint64_t mpix_dev_load_acquire(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
MPIX_DEVICE_FN void mpix_dev_store(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
MPIX_DEVICE_FN void mpix_dev_store_release(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
MPIX_DEVICE_FN void mpix_dev_fence_release(void) {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}
MPIX_DEVICE_FN void mpix_dev_fence_gpu(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
#elif defined(__HIPCC__) || defined(__HIP__)
#define MPIX_DEVICE_FN static __device__ __forceinline__
MPIX_DEVICE_FN uint64_t mpix_dev_load(const uint64_t *p) {
  return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
MPIX_DEVICE_FN uint64_t mpix_dev_load_acquire(const uint64_t *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
MPIX_DEVICE_FN void mpix_dev_store(uint64_t *p, uint64_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
MPIX_DEVICE_FN void mpix_dev_store_release(uint64_t *p, uint64_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
MPIX_DEVICE_FN void mpix_dev_fence_release(void) { __threadfence_system(); }
MPIX_DEVICE_FN void mpix_dev_fence_gpu(void) { __threadfence(); }
#else
#define MPIX_DEVICE_FN static inline
MPIX_DEVICE_FN uint64_t mpix_dev_load(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
MPIX_DEVICE_FN uint64_t mpix_dev_load_acquire(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
MPIX_DEVICE_FN void mpix_dev_store(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
MPIX_DEVICE_FN void mpix_dev_store_release(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
MPIX_DEVICE_FN void mpix_dev_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
MPIX_DEVICE_FN void mpix_dev_fence_gpu(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
/* Host threads read the host copy of a descriptor that may live in device memory; a handle
   that is no live device request runs on_bad. */
#define MPIX_PREQ_HOST_VIEW(preq, on_bad)            \
  do {                                               \
    if (!((preq) = MPIX_Prequest_host_view(preq))) { \
      on_bad;                                        \
    }                                                \
  } while (0)
/* Marks a host thread made through a host view with device_data go to the device marks too. */
#define MPIX_PREQ_HOST_MARKED(preq, low, high, r) MPIX_Prequest_host_marked(preq, low, high, r)
#endif
#ifndef MPIX_PREQ_HOST_VIEW
#define MPIX_PREQ_HOST_VIEW(preq, on_bad) ((void)0)
#define MPIX_PREQ_HOST_MARKED(preq, low, high, r) MPI_SUCCESS
#endif

/** Records the first misuse of @p preq; returns its MPI error class. */
MPIX_DEVICE_FN int mpix_prequest_fail(MPIX_Prequest preq, int kind, int partition) {
  if ((int64_t)(mpix_dev_load(preq->error) - preq->base) <= 0)
    mpix_dev_store(preq->error, preq->base + 1 + (((uint64_t)kind << 32) | (uint32_t)partition));
  return (kind == MPIX_PREQ_ERR_RANGE || kind == MPIX_PREQ_ERR_DOUBLE) ? MPI_ERR_ARG
                                                                       : MPI_ERR_REQUEST;
}

/**
 * Marks send partition @p partition ready (device MPI_Pready). Call from one thread once the
 * partition is written; see the rules above.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Pready(int partition, MPIX_Prequest preq) {
  MPIX_PREQ_HOST_VIEW(preq, return MPI_ERR_REQUEST);
  // The descriptor's fields and the round's device copy in one go (a device descriptor's copy
  // is a field of it); the partition's words only once the range is checked.
  const uint64_t gc = mpix_dev_load(&preq->dround_copy);
  if (!preq->is_send) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, partition);
  if (partition < 0 || partition >= preq->partitions)
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, partition);
  uint64_t *w = preq->words[partition];
  // The round and the partition's last mark: device copies where there are (no load crosses
  // to host memory: many blocks reading one host word are served one after another), else
  // the host words, both loads issued together.
  uint64_t *shadow = preq->dready ? preq->dready + partition : 0;
  const uint64_t g = preq->dround ? gc : mpix_dev_load(preq->round),
                 old = mpix_dev_load(shadow ? shadow : w);
  if (((g - preq->base) & 1u) == 0)
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, partition);
  const uint64_t r = g + 1;
  if (preq->device_data) {
    // The data is in this GPU's memory: once the fence has it in L2, every reader sees it. The
    // marks are stored before the double-ready check, which then waits for nothing: a second
    // MPIX_Pready of a partition stores the value its marks hold already.
    mpix_dev_fence_gpu();
    if (shadow) mpix_dev_store(shadow, r);  // (a host view has none: MPIX_PREQ_HOST_MARKED)
    mpix_dev_store(w, r);
    if ((int64_t)(old - r) >= 0) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_DOUBLE, partition);
    return MPIX_PREQ_HOST_MARKED(preq, partition, partition, r);
  }
  if ((int64_t)(old - r) >= 0) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_DOUBLE, partition);
  if (shadow) mpix_dev_store(shadow, r);
  mpix_dev_store_release(w, r);  // the partition's data is visible before its ready mark
  return MPI_SUCCESS;
}

/**
 * Marks send partitions @p low .. @p high (inclusive) ready with one fence. All are checked
 * before any is marked.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Pready_range(int low, int high, MPIX_Prequest preq) {
  MPIX_PREQ_HOST_VIEW(preq, return MPI_ERR_REQUEST);
  if (!preq->is_send) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, low);
  if (low > high || low < 0) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, low);
  if (high >= preq->partitions) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, high);
  const uint64_t gc = mpix_dev_load(&preq->dround_copy);
  const uint64_t g = preq->dround ? gc : mpix_dev_load(preq->round);
  if (((g - preq->base) & 1u) == 0) return mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, low);
  const uint64_t r = g + 1;
  for (int p = low; p <= high; ++p)
    if ((int64_t)(mpix_dev_load(preq->dready ? preq->dready + p : preq->words[p]) - r) >= 0)
      return mpix_prequest_fail(preq, MPIX_PREQ_ERR_DOUBLE, p);
  // One fence for the whole range, before any mark (device_data: see MPIX_Pready).
  if (preq->device_data) mpix_dev_fence_gpu();
  else mpix_dev_fence_release();
  if (preq->dready)
    for (int p = low; p <= high; ++p) mpix_dev_store(preq->dready + p, r);
  for (int p = low; p <= high; ++p) mpix_dev_store(preq->words[p], r);
  return preq->device_data ? MPIX_PREQ_HOST_MARKED(preq, low, high, r) : MPI_SUCCESS;
}

/**
 * Sets @p *flag to 1 once receive partition @p partition of the active round has arrived, else
 * 0 (device MPI_Parrived). Data read after a true flag is the arrived data.
 * @return MPI_SUCCESS, or the MPI error class of the misuse it recorded.
 */
MPIX_DEVICE_FN int MPIX_Parrived(MPIX_Prequest preq, int partition, int *flag) {
  MPIX_PREQ_HOST_VIEW(preq, *flag = 1; return MPI_ERR_REQUEST);
  const int32_t is_send = preq->is_send, partitions = preq->partitions;
#if defined(__CUDACC__)
  // Where the request's rounds go direct (darrived[1] set), the round and its arrival are words
  // of this GPU's memory, and no load crosses to host memory (many blocks polling host words
  // are served one after another). The round's copy is read with the descriptor's fields (it
  // is one of them), then the flag and the arrival together. The acquire on the round orders
  // the arrival after it, the acquire on the arrival the data reads after the call (no fence
  // needed). An arrival read before the flag is at worst stale: the caller looks again.
  const uint64_t *const da = preq->darrived, *const dr = preq->dround;
  const uint64_t base = preq->base;
  const uint64_t gd = mpix_dev_load_acquire(&preq->dround_copy);
#endif
  if (is_send) {
    *flag = 1;
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_SIDE, partition);
  }
  if (partition < 0 || partition >= partitions) {
    *flag = 1;
    return mpix_prequest_fail(preq, MPIX_PREQ_ERR_RANGE, partition);
  }
#if defined(__CUDACC__)
  if (da && dr) {
    const uint64_t d = mpix_dev_load_acquire(da);
    if (*(volatile const uint64_t *)(da + 1)) {
      const bool active = ((gd - base) & 1u) != 0;
      if (gd != base && (int64_t)(d - (active ? gd + 1 : gd)) >= 0) {
        *flag = 1;
        return MPI_SUCCESS;
      }
      *flag = !active;
      return active ? MPI_SUCCESS : mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, partition);
    }
  }
  // Volatile loads reach host memory every time; the system fence after a true flag orders
  // the data reads that follow the call (the form the GPU tests ran, see
  // docs/results-partitioned.md).
  const uint64_t g = *(volatile const uint64_t *)preq->round,
                 a = *(volatile const uint64_t *)preq->words[partition];
  const uint64_t d = preq->darrived ? *(volatile const uint64_t *)preq->darrived : preq->base;
#else
  // The acquire on the partition's word orders the data reads that follow the call.
  const uint64_t g = mpix_dev_load(preq->round), a = mpix_dev_load_acquire(preq->words[partition]);
  const uint64_t d = preq->darrived ? mpix_dev_load_acquire(preq->darrived) : preq->base;
#endif
  const bool active = ((g - preq->base) & 1u) != 0;
  const uint64_t r = active ? g + 1 : g;
  if (g != preq->base && ((int64_t)(a - r) >= 0 || (preq->darrived && (int64_t)(d - r) >= 0))) {
#if defined(__CUDACC__)
    __threadfence_system();
#endif
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!active) {
    // Seen inactive: either the round completed while this caller polled, or the request was
    // never started. The two loads above may have been served out of order (a fresh round
    // word next to a stale arrival word), so look again in order: the host marks a round
    // completed only after every partition's arrival, so once the round word is read with
    // acquire, the arrival word read after it is at least as new.
    const uint64_t g2 = mpix_dev_load_acquire(preq->round);
    const uint64_t a2 = mpix_dev_load_acquire(preq->words[partition]);
    const uint64_t d2 = preq->darrived ? mpix_dev_load_acquire(preq->darrived) : preq->base;
    const bool active2 = ((g2 - preq->base) & 1u) != 0;
    const uint64_t r2 = active2 ? g2 + 1 : g2;
    if (g2 != preq->base &&
        ((int64_t)(a2 - r2) >= 0 || (preq->darrived && (int64_t)(d2 - r2) >= 0))) {
      *flag = 1;
      return MPI_SUCCESS;
    }
    if (!active2) {
      *flag = 1;
      return mpix_prequest_fail(preq, MPIX_PREQ_ERR_INACTIVE, partition);
    }
  }
  *flag = 0;
  return MPI_SUCCESS;
}

#endif /* MPIX_MPIX_DEVICE_H */
