// mpix's CUDA kernels.
// The `kernel` trigger mode: 1-thread kernels that store a signal word or spin until one is
// reached. Used where the stream cannot carry memory operations (devices without them, streams
// being captured) and when asked for with mpix_trigger=kernel / MPIX_TRIGGER=kernel.
// Staging of datatypes with many gaps: one kernel copies the blocks of a table of runs between
// device memory and a mapped pinned bounce buffer, where a copy per run would cost a runtime
// call each.
#include <atomic>
#include <tuple>

#include "gpu/cuda/cuda_api.hpp"

namespace mpix {
namespace {

// Acquire loads and release stores: one access each, where a plain access and a fence.sc
// (__threadfence / __threadfence_system, membar.gl / membar.sys) cost more. Data a thread reads
// after an acquire load that saw a word's new value is at least as new as what the word's
// writer published before it, and a barrier after the load extends that to the block; a
// release store publishes what this thread wrote before it, and what the block wrote before a
// barrier it passed.
__device__ __forceinline__ unsigned long long load_acquire_sys(
    const volatile unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long load_acquire_gpu(
    const volatile unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release(volatile unsigned long long *p, unsigned long long v,
                                              bool gpu_scope) {
  if (gpu_scope) asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// A kernel launched as a programmatic dependent (MPIX_CUDA_PDL, CudaApi::launch) may start
// before the kernel ahead of it on the stream has ended: every mpix kernel waits here, first,
// for that kernel's end and for its memory. Launched plainly (or after a stream memory
// operation or copy, which the launch waits for as always) it returns at once.
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Spins until *word reached value (the cyclic comparison of CU_STREAM_WAIT_VALUE_GEQ, so every
// mode agrees on what "reached" is), each look an acquire load at system scope: what follows is
// ordered after it as after a stream memory operation's wait.
__device__ __forceinline__ void spin_acquire(const volatile unsigned long long *word,
                                             unsigned long long value) {
  while (static_cast<long long>(load_acquire_sys(word) - value) < 0) {
  }
}

// Until @p word reaches @p value or @p alt (a word in this GPU's memory) reaches @p alt_value,
// whichever comes first (StreamMemOp::alt_word).
__device__ __forceinline__ void spin_either(const volatile unsigned long long *word,
                                            unsigned long long value,
                                            const volatile unsigned long long *alt,
                                            unsigned long long alt_value) {
  while (static_cast<long long>(load_acquire_sys(word) - value) < 0 &&
         static_cast<long long>(load_acquire_sys(alt) - alt_value) < 0) {
  }
}

// Earlier kernels on the stream have finished before this one starts; the fence makes their
// writes visible to the host before the host can see the new value.
__global__ void store_word(volatile unsigned long long *word, unsigned long long value) {
  griddep_wait();
  __threadfence_system();
  *word = value;  // published by the kernel's end (a fence after it holds the stream)
}

__global__ void wait_word(const volatile unsigned long long *word, unsigned long long value) {
  griddep_wait();
  spin_acquire(word, value);
}

// CudaApi::ops_kernel: each write a release store at system scope (visible before the waits
// after it start, where store_word's plain store is published by the kernel's end).
__global__ void run_ops(OpList l) {
  griddep_wait();
  for (unsigned i = 0; i < l.n; ++i) {
    auto *w = reinterpret_cast<volatile unsigned long long *>(l.word[i]);
    if (l.waits >> i & 1u) spin_acquire(w, l.value[i]);
    else store_release(w, l.value[i], false);
  }
}

// Words i, i + stride, ... below @p words of @p s to @p d, by one thread: four loads issued before
// their four stores. A plain loop waits for each load before it may issue the next (the compiler
// cannot move a load above a store that may alias it), so a thread with several words paid one
// memory latency per word; now it pays one per four. @p d and @p s do not overlap.
template <class W>
__device__ __forceinline__ void copy_strided(W *d, const W *s, unsigned long long words,
                                             unsigned long long i, unsigned long long stride) {
  constexpr int kInFlight = 4;
  for (; i < words; i += kInFlight * stride) {
    W v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (i + k * stride < words) v[k] = s[i + k * stride];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (i + k * stride < words) d[i + k * stride] = v[k];
  }
}

// One run's blocks, by the threads of one CUDA block, in words of W bytes (every address of the
// run is a multiple of sizeof(W)). A single block skips the row arithmetic (a 64-bit division per
// word).
template <class W>
__device__ void copy_run(char *dst, const char *src, const CopyRun &r) {
  const unsigned long long words = r.len / sizeof(W);
  if (r.count == 1) {
    copy_strided(reinterpret_cast<W *>(dst + r.offset), reinterpret_cast<const W *>(src + r.offset),
                 words, threadIdx.x, blockDim.x);
    return;
  }
  const unsigned long long total = words * r.count;
  for (unsigned long long i = threadIdx.x; i < total; i += blockDim.x) {
    const unsigned long long row = i / words, col = i - row * words;
    const unsigned long long off = r.offset + row * r.stride + col * sizeof(W);
    *reinterpret_cast<W *>(dst + off) = *reinterpret_cast<const W *>(src + off);
  }
}

// copy_run in the widest words that @p align (every address, length and stride of the run or'ed
// together) allows.
__device__ void copy_run_widest(char *dst, const char *src, const CopyRun &r,
                                unsigned long long align) {
  if (align % 16 == 0) copy_run<uint4>(dst, src, r);
  else if (align % 8 == 0) copy_run<unsigned long long>(dst, src, r);
  else if (align % 4 == 0) copy_run<unsigned int>(dst, src, r);
  else copy_run<unsigned char>(dst, src, r);
}

// A CUDA block per run at a time. Runs of one typemap never overlap where it matters: a
// receive's typemap may not overlap, and a send's overlapping blocks copy the same bytes.
__global__ void copy_run_table(char *dst, const char *src, const CopyRun *runs,
                               unsigned long long n) {
  griddep_wait();
  // The table may live in pinned host memory: one thread loads each run for its block (the
  // same host address read by every thread would be a PCIe read each, serialised).
  __shared__ CopyRun run;
  for (unsigned long long i = blockIdx.x; i < n; i += gridDim.x) {
    __syncthreads();  // the previous run is no longer read
    if (threadIdx.x == 0) run = runs[i];
    __syncthreads();
    const CopyRun r = run;
    const unsigned long long a = r.offset | r.len | (r.count > 1 ? r.stride : 0) |
                                 reinterpret_cast<unsigned long long>(dst) |
                                 reinterpret_cast<unsigned long long>(src);
    copy_run_widest(dst, src, r, a);
  }
  // A gather into host memory is read by the agent once the stream's trigger is written.
  __threadfence_system();
}

// A list of copies, a block per piece at a time (Backend::agent_copy_deferred: small pieces),
// in the widest words both ends allow. The table lives in pinned host memory: one thread loads
// each piece for its block.
__global__ void copy_piece_list(const CopyPiece *pieces, unsigned long long n) {
  griddep_wait();
  __shared__ CopyPiece piece;
  for (unsigned long long i = blockIdx.x; i < n; i += gridDim.x) {
    __syncthreads();  // the previous piece is no longer read
    if (threadIdx.x == 0) piece = pieces[i];
    __syncthreads();
    const CopyPiece p = piece;
    copy_run_widest(reinterpret_cast<char *>(p.dst), reinterpret_cast<const char *>(p.src),
                    CopyRun{0, p.len, 0, 1}, p.dst | p.src | p.len);
  }
}

// A staged receive's copy into device memory: the first min(len[0] - skip, max) bytes, the
// length read when the kernel runs (the agent stored it before releasing the stream's wait);
// skip is where this piece starts in the message. len[1], read likewise, is where the message
// is when it is not at src: a GPU-direct message, in its sender's memory mapped here.
// Grid-stride over words of W bytes (W divides dst - src); the bytes before dst's first
// W-aligned address and after the last whole word go one by one. @p block: by the calling block
// alone (a block of a grid whose blocks each copy something else: wait_then_copy_many).
template <class W>
__device__ void copy_prefix_words(char *dst, const char *src, unsigned long long n, bool block) {
  const unsigned long long tid =
      block ? threadIdx.x : blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  const unsigned long long nthreads =
      block ? blockDim.x : static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long head =
      (sizeof(W) - reinterpret_cast<unsigned long long>(dst) % sizeof(W)) % sizeof(W);
  if (head > n) head = n;
  const unsigned long long words = (n - head) / sizeof(W);
  for (unsigned long long i = tid; i < head; i += nthreads) dst[i] = src[i];
  copy_strided(reinterpret_cast<W *>(dst + head), reinterpret_cast<const W *>(src + head), words,
               tid, nthreads);
  for (unsigned long long i = head + words * sizeof(W) + tid; i < n; i += nthreads) dst[i] = src[i];
}

// n bytes by the grid (@p block: by the calling block alone), in the widest words the skew
// between the two buffers allows.
__device__ void copy_bytes(char *dst, const char *src, unsigned long long n, bool block = false) {
  const unsigned long long skew =
      reinterpret_cast<unsigned long long>(dst) - reinterpret_cast<unsigned long long>(src);
  if (skew % 16 == 0) copy_prefix_words<uint4>(dst, src, n, block);
  else if (skew % 8 == 0) copy_prefix_words<unsigned long long>(dst, src, n, block);
  else if (skew % 4 == 0) copy_prefix_words<unsigned int>(dst, src, n, block);
  else copy_prefix_words<unsigned char>(dst, src, n, block);
}

// A GPU-direct message copied from its sender's memory (@p from, len[1], not 0) by @p blocks
// blocks: once each has copied its share, the last one sets len[3], on which the receiver's
// agent answers the sender (its buffer is free again), and before it the sender's done word
// @p done (len[6], mapped here; 0: none) to @p done_value, on which the sender's stream may go
// on without that answer (Op::peer_done). @p count: those blocks' device counter (null for one
// block), left at 0 for the stream's next launch.
__device__ void announce_copied(volatile unsigned long long *len, unsigned long long from,
                                unsigned long long done, unsigned long long done_value,
                                unsigned long long *count, unsigned blocks) {
  if (!from) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (blocks > 1) {
    __threadfence();
    if (atomicAdd(count, 1ull) != blocks - 1) return;
    *count = 0;
    // The other blocks' copies (each fenced before its increment) are ordered before the
    // announcement by a fence after the increment seen last: a release store alone orders only
    // what this block wrote or acquired.
    __threadfence();
  }
  // Every block's reads of the sender's buffer are over: the sender may reuse it. Released at
  // system scope (the sender's stream may wait on another GPU), before len[3], so that the
  // sender's agent (which gives the word back on the answer len[3] leads to) finds it written.
  if (done) store_release(reinterpret_cast<volatile unsigned long long *>(done), done_value, false);
  store_release(len + 3, 1, false);
}

// The words a copy in reads from pinned host memory (StagedBuffers::len_word): the length, the
// source, and for a GPU-direct message from an announced send the sender's ready word (mapped
// here) and the value that says its data is in place, and the sender's done word and the value
// to write there once copied (Stager::deliver_from). One thread loads all six before it uses
// any, so that they cost one PCIe round trip, not one each.
struct LenWords {
  unsigned long long total, from, gate, gate_value, done, done_value;
};
__device__ LenWords load_len(const volatile unsigned long long *len) {
  LenWords w;
  w.total = len[0];
  w.from = len[1];
  w.gate = len[4];
  w.gate_value = len[5];
  w.done = len[6];
  w.done_value = len[7];
  return w;
}
// Returns once an announced send's data is in place (at once for any other message).
__device__ void wait_gate(const LenWords &w) {
  if (w.from && w.gate)
    spin_acquire(reinterpret_cast<const volatile unsigned long long *>(w.gate), w.gate_value);
}

__global__ void copy_prefix(char *dst, const char *src, unsigned long long max,
                            volatile unsigned long long *len, unsigned long long skip) {
  griddep_wait();
  // The length lives in pinned host memory: read it once per block, not once per thread (every
  // thread reading the same host word is a PCIe read each, and they serialise: 65,536 of them
  // would take milliseconds for a 4 MiB receive).
  __shared__ unsigned long long block_total, block_from;
  LenWords w{};  // thread 0's, which announces
  if (threadIdx.x == 0) {
    w = load_len(len);
    wait_gate(w);
    block_total = w.total;
    block_from = w.from;
  }
  __syncthreads();
  const unsigned long long total = block_total;
  unsigned long long n = total > skip ? total - skip : 0;
  if (n > max) n = max;
  copy_bytes(dst, block_from ? reinterpret_cast<const char *>(block_from) : src, n);
  announce_copied(len, block_from, w.done, w.done_value, nullptr, 1);  // one block
}

// copy_prefix on a grid that reads the host length once: block 0 reads it and hands it to the
// other blocks through its stream's device words (g_fuse_slots, below), told apart per launch
// by @p ticket. Even one read per block serialises: a 4 MiB receive's 256 blocks took ~360 us
// before the copy could start (~1.4 us per read of one host word, one H200). Blocks start in
// index order, so block 0 runs before any block waits for it.
__global__ void copy_prefix_grid(char *dst, const char *src, unsigned long long max,
                                 volatile unsigned long long *len, unsigned long long skip,
                                 int slot, unsigned long long ticket);

// A staged send's copy out and trigger in one kernel of one block: every thread copies its
// share, the block meets, then one thread makes the copy visible to the host and stores the
// trigger (the agent reads the bounce buffer once it sees the trigger).
__global__ void copy_then_store(char *dst, const char *src, unsigned long long n,
                                volatile unsigned long long *word, unsigned long long value) {
  griddep_wait();
  copy_bytes(dst, src, n);
  __syncthreads();
  // No fence after the store: the kernel's end publishes it, and one would hold the stream for
  // a PCIe round trip.
  if (threadIdx.x == 0) store_release(word, value, false);
}

// The write of ThenWaits made before a fused receive waits (a deferred trigger: the host may
// post the awaited op only once it sees it). Earlier stream work (a copy out into a bounce
// buffer the agent will read) finished before this kernel started, and this block's own copies
// (pre_copies) before the barrier that precedes the call; the release at system scope makes
// them visible to the host before the store, and no fence is needed after it.
__device__ void write_pre(const ThenWaits &then) {
  if (then.pre_word)
    store_release(reinterpret_cast<volatile unsigned long long *>(then.pre_word), then.pre_value,
                  false);
}

// The copies of ThenWaits made before its write (a stream's deferred copies out, into bounce
// buffers the agent sends from once it sees the write), by the whole block; then the write.
__device__ void pre_copies_and_write(const ThenWaits &then) {
  if (then.npre) {
    for (unsigned i = 0; i < then.npre; ++i)
      copy_bytes(reinterpret_cast<char *>(then.pre_dst[i]),
                 reinterpret_cast<const char *>(then.pre_src[i]), then.pre_len[i], true);
    __syncthreads();
  }
  if (threadIdx.x == 0) write_pre(then);
}

// ExecStream::copies_then_write as one kernel of one block.
__global__ void copies_then_store(ThenWaits then) {
  griddep_wait();
  pre_copies_and_write(then);
}

// The waits of ThenWaits by one thread (the kernel's stream goes on once all are reached).
__device__ void wait_then(const ThenWaits &then) {
  for (unsigned i = 0; i < then.n; ++i) {
    const auto *w = reinterpret_cast<const volatile unsigned long long *>(then.word[i]);
    if (then.alt_word[i])
      spin_either(w, then.value[i],
                  reinterpret_cast<const volatile unsigned long long *>(then.alt_word[i]),
                  then.alt_value[i]);
    else spin_acquire(w, then.value[i]);
  }
}

// A direct partitioned round's copy (partitioned/direct_link.hpp) as one kernel: the block's
// threads wait side by side for the @p nmarks device words at @p marks to reach @p mark (the
// partitions' ready marks; each read stays in this GPU's memory), and at the same time the
// first thread of the last warp for @p first (the receiver's open round, host ready marks:
// mostly reached long before, so their reads leave the critical path); then the block copies
// @p n bytes and one thread stores the arrival mark with a release that makes the copy visible
// to the mark's readers first (@p local_dst: it landed in this GPU's memory, GPU scope; else
// system scope). @p word null: the kernel only waits, and the stream's next operations copy
// and mark.
__global__ void waits_copy_store(const unsigned long long *marks, unsigned long long nmarks,
                                 unsigned long long mark, ThenWaits first, char *dst,
                                 const char *src, unsigned long long n,
                                 volatile unsigned long long *word, unsigned long long value,
                                 bool local_dst) {
  griddep_wait();
  // The marks were stored after a GPU-scope fence of their writers (mpix_device.h): the
  // acquire, and the barrier below, order the reads of the data after them.
  for (unsigned long long i = threadIdx.x; i < nmarks; i += blockDim.x)
    while (static_cast<long long>(load_acquire_gpu(marks + i) - mark) < 0) {
    }
  if (threadIdx.x == (blockDim.x > 32 ? blockDim.x - 32 : 0)) wait_then(first);
  __syncthreads();
  copy_bytes(dst, src, n);
  if (!word) return;
  __syncthreads();
  if (threadIdx.x == 0) store_release(word, value, local_dst);
}

// A tiny receive's flagged words (TinyWords, after the length words @p tw): the block polls
// them and the completion word together, each thread one word, relaxed loads issued at once (one
// PCIe round trip a look, where an acquire load of the completion word and then of the length
// words take two one after the other). True once every word the receive buffer of @p max bytes
// needs carries @p flag: the payload is then in @p out (4-byte words) and the length in
// *@p total; false (out untouched) once the completion word is reached without them (a receive
// whose message was delivered elsewhere) — after one more look, for a writer that flagged them
// just before the word. Each word is written and read whole, so a flagged word's payload is this
// receive's. Every thread of the block calls it (block barriers).
__device__ __forceinline__ unsigned long long load_relaxed_sys(
    const volatile unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static_assert(TinyWords::kWords < 256, "a 256-thread block: the words, then the completion word");
// TinyWords::words, for device code.
__device__ __forceinline__ unsigned tiny_words(unsigned long long max) {
  return static_cast<unsigned>(1 + (max + 3) / 4);
}
__device__ bool poll_tiny(const volatile unsigned long long *word, unsigned long long value,
                          const volatile unsigned long long *tw, unsigned long long max,
                          unsigned flag, unsigned *out, unsigned long long *total) {
  const unsigned t = threadIdx.x;
  const unsigned words = tiny_words(max);
  const unsigned last = blockDim.x - 1;
  int reached_looks = 0;
  for (;;) {
    unsigned long long v = 0, w = 0;
    if (t < words) v = load_relaxed_sys(tw + t);
    if (t == last) w = load_relaxed_sys(word);
    if (__syncthreads_and(t >= words || static_cast<unsigned>(v >> 32) == flag)) {
      if (t == 0) *total = static_cast<unsigned>(v);
      else if (t < words) out[t - 1] = static_cast<unsigned>(v);
      __syncthreads();
      return true;
    }
    if (__syncthreads_or(t == last && static_cast<long long>(w - value) >= 0) &&
        ++reached_looks > 1)
      return false;
  }
}

// A staged receive's completion wait and copy in as one kernel: in each block one thread spins
// on the completion word (one host-memory reader per block), the block meets, then its threads
// copy their share of the message's prefix as copy_prefix does.
//
// Up to kSpeculate bytes from an aligned bounce buffer, the block loads the bounce buffer's head
// into shared memory while thread 0 loads the length and source words: one PCIe round trip
// (~1.4 us on one H200) instead of two one after the other. A message that came GPU-direct
// (len[1] set) is then copied from its sender's memory as before, the loads wasted.
constexpr unsigned kSpeculate = 4096;

// One block's staged receive: the completion wait and the copy in of wait_then_copy (below),
// its pre work and its other waits left to the caller. @p total, @p from and @p head are the
// block's shared memory. Every thread of the block calls it.
__device__ void receive_block(const volatile unsigned long long *word, unsigned long long value,
                              char *dst, const char *src, unsigned long long max,
                              volatile unsigned long long *len, unsigned tiny_flag,
                              unsigned long long &total, unsigned long long &from, uint4 *head) {
  // A tiny receive: its message in flagged words (TinyWords), polled by the block with the
  // completion word; only where the word is reached without them does the length-word path
  // below run.
  // (A block too small to load every word with the completion word takes the length words.)
  if (tiny_flag && max <= TinyWords::kBytes && tiny_words(max) < blockDim.x &&
      poll_tiny(word, value, len + TinyWords::kAt, max, tiny_flag,
                reinterpret_cast<unsigned *>(head), &total)) {
    copy_bytes(dst, reinterpret_cast<const char *>(head), total < max ? total : max, true);
    return;
  }
  if (threadIdx.x == 0) spin_acquire(word, value);
  __syncthreads();
  const bool speculate = max <= kSpeculate && reinterpret_cast<unsigned long long>(src) % 16 == 0;
  LenWords w{};  // thread 0's, which announces
  if (threadIdx.x == 0) {
    w = load_len(len);
    wait_gate(w);
    total = w.total;
    from = w.from;
  }
  if (speculate) {
    // Past the message but inside the bounce buffer (at least a page; its words follow the span).
    const unsigned long long words = (max + sizeof(uint4) - 1) / sizeof(uint4);
    for (unsigned long long i = threadIdx.x; i < words; i += blockDim.x)
      head[i] = __ldcv(reinterpret_cast<const uint4 *>(src) + i);
  }
  __syncthreads();
  unsigned long long n = total;
  if (n > max) n = max;
  const char *at = from        ? reinterpret_cast<const char *>(from)
                   : speculate ? reinterpret_cast<const char *>(head)
                               : src;
  copy_bytes(dst, at, n, true);
  announce_copied(len, from, w.done, w.done_value, nullptr, 1);
}

__global__ void wait_then_copy(const volatile unsigned long long *word, unsigned long long value,
                               char *dst, const char *src, unsigned long long max,
                               volatile unsigned long long *len, ThenWaits then) {
  griddep_wait();
  __shared__ unsigned long long total, from;
  __shared__ uint4 head[kSpeculate / sizeof(uint4)];
  pre_copies_and_write(then);
  receive_block(word, value, dst, src, max, len, then.tiny_flag, total, from, head);
  // After the copy and its announcement: a send these wait for may complete only once the
  // peer has copied a message of ours (Stager::waits_first).
  if (threadIdx.x == 0) wait_then(then);
}

// How the blocks of a grid (or of one receive in wait_then_copy_many) meet, by their thread 0:
// the @p leader reads the length words (once the sender's data is in place: wait_gate) and
// leaves the length, the source and the sender's done word and value in @p s (s[1], s[2], s[4],
// s[5]), then @p ticket; the others wait for the ticket and read them (the done word into
// @p done[0..1]: the block that announces the copy writes it). The others spin on device memory,
// not on the host words: every block reading one word of pinned host memory is a PCIe read, and
// those serialise (~1.4 us each on one H200).
__device__ void share_len(bool leader, volatile unsigned long long *len,
                          volatile unsigned long long *s, unsigned long long ticket,
                          unsigned long long &total, unsigned long long &from,
                          unsigned long long *done) {
  if (leader) {
    const LenWords w = load_len(len);
    wait_gate(w);
    total = w.total;
    from = w.from;
    done[0] = w.done;
    done[1] = w.done_value;
    s[1] = total;
    s[2] = from;
    s[4] = w.done;
    s[5] = w.done_value;
    __threadfence();
    s[0] = ticket;
  } else {
    while (s[0] != ticket) {
    }
    __threadfence();
    total = s[1];
    from = s[2];
    done[0] = s[4];
    done[1] = s[5];
  }
}

// A fused receive's device words for its blocks to meet in when it spans several blocks of
// wait_then_copy_many (as g_fuse_slots for wait_then_copy_grid, below): per stream slot and
// receive of a launch, {ticket, length, source, blocks done, the sender's done word, its value}.
__device__ unsigned long long g_many_slots[CudaApi::kFuseSlots][FusedReceives::kMax][6];

// Block @p k of the @p nb blocks of a staged receive in wait_then_copy_many (nb > 1): block 0
// waits for the completion word, reads the length words and tells the others through @p s
// (share_len), as wait_then_copy_grid's blocks meet; then each block copies its share of the
// message, and for a GPU-direct message the last block done announces the copy. Every thread of
// the block calls it.
__device__ void receive_share(const volatile unsigned long long *word, unsigned long long value,
                              char *dst, const char *src, unsigned long long max,
                              volatile unsigned long long *len, unsigned k, unsigned nb,
                              volatile unsigned long long *s, unsigned long long ticket,
                              unsigned long long &total, unsigned long long &from) {
  unsigned long long done[2] = {0, 0};  // thread 0's, which announces
  if (threadIdx.x == 0) {
    if (k == 0) spin_acquire(word, value);
    share_len(k == 0, len, s, ticket, total, from, done);
  }
  __syncthreads();
  const unsigned long long n = total < max ? total : max;
  // Shares of whole 16-byte words (so every share keeps the buffers' skew and alignment).
  const unsigned long long share = ((max + nb - 1) / nb + 15) / 16 * 16;
  const unsigned long long at = k * share;
  if (at < n)
    copy_bytes(dst + at, (from ? reinterpret_cast<const char *>(from) : src) + at,
               n - at < share ? n - at : share, true);
  announce_copied(len, from, done[0], done[1], const_cast<unsigned long long *>(&s[3]), nb);
}

// Several staged receives of one MPIX_Waitall_enqueue as one kernel, each on its blocks
// (r.blocks: one as wait_then_copy's block, or several as wait_then_copy_grid's grid, meeting in
// g_many_slots[slot]; dst null: only the wait, one block): block 0 makes the pre work first (the
// trigger may post the receives the others wait for; blocks start in index order, so it runs
// before any of them waits for long, and a receive's first block before its others), and the
// other waits after its own copy.
__global__ void wait_then_copy_many(FusedReceives r, int slot, unsigned long long ticket,
                                    ThenWaits then) {
  griddep_wait();
  __shared__ unsigned long long total, from;
  __shared__ uint4 head[kSpeculate / sizeof(uint4)];
  // This block's receive (i) and which of its blocks it is (k).
  unsigned i = 0, k = blockIdx.x;
  while (i + 1 < r.n && k >= r.blocks[i]) k -= r.blocks[i++];
  if (blockIdx.x == 0) pre_copies_and_write(then);
  const auto *word = reinterpret_cast<const volatile unsigned long long *>(r.word[i]);
  char *dst = reinterpret_cast<char *>(r.dst[i]);
  const char *src = reinterpret_cast<const char *>(r.src[i]);
  auto *len = reinterpret_cast<volatile unsigned long long *>(r.len[i]);
  if (!dst) {
    if (threadIdx.x == 0) spin_acquire(word, r.value[i]);
  } else if (r.blocks[i] > 1) {
    receive_share(word, r.value[i], dst, src, r.max[i], len, k, r.blocks[i], g_many_slots[slot][i],
                  ticket, total, from);
  } else {
    receive_block(word, r.value[i], dst, src, r.max[i], len, r.tiny_flag[i], total, from, head);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) wait_then(then);
}

// The grid of a fused receive larger than one block can copy quickly (wait_then_copy_grid): per
// stream that runs one, device words {ticket, length, source, blocks done} through which block 0
// tells the others that the completion word was reached, how long the message is and where it
// is (share_len), and the sender's done word and value (s[4], s[5]).
__device__ unsigned long long g_fuse_slots[CudaApi::kFuseSlots][6];

__global__ void wait_then_copy_grid(const volatile unsigned long long *word,
                                    unsigned long long value, char *dst, const char *src,
                                    unsigned long long max, volatile unsigned long long *len,
                                    int slot, unsigned long long ticket, ThenWaits then) {
  griddep_wait();
  volatile unsigned long long *s = g_fuse_slots[slot];
  __shared__ unsigned long long total, from;
  unsigned long long done[2] = {0, 0};  // thread 0's, which announces
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      write_pre(then);  // never copies here (ExecStream::wait_then_copy_prefix: one block only)
      spin_acquire(word, value);
    }
    share_len(blockIdx.x == 0, len, s, ticket, total, from, done);
  }
  __syncthreads();
  unsigned long long n = total;
  if (n > max) n = max;
  copy_bytes(dst, from ? reinterpret_cast<const char *>(from) : src, n);
  announce_copied(len, from, done[0], done[1], const_cast<unsigned long long *>(&s[3]), gridDim.x);
  if (blockIdx.x == 0 && threadIdx.x == 0) wait_then(then);  // as in wait_then_copy
}

__global__ void copy_prefix_grid(char *dst, const char *src, unsigned long long max,
                                 volatile unsigned long long *len, unsigned long long skip,
                                 int slot, unsigned long long ticket) {
  griddep_wait();
  volatile unsigned long long *s = g_fuse_slots[slot];
  __shared__ unsigned long long total, from;
  unsigned long long done[2] = {0, 0};  // thread 0's, which announces
  if (threadIdx.x == 0) share_len(blockIdx.x == 0, len, s, ticket, total, from, done);
  __syncthreads();
  unsigned long long n = total > skip ? total - skip : 0;
  if (n > max) n = max;
  copy_bytes(dst, from ? reinterpret_cast<const char *>(from) : src, n);
  announce_copied(len, from, done[0], done[1], const_cast<unsigned long long *>(&s[3]), gridDim.x);
}

// A large copy in of a message that may come from an announced send, in two kernels: one thread
// reads the length words, waits for the sender's data (wait_gate), and leaves the length and the
// source in the stream's device words; then copy_prefix_gated, launched behind it, copies on a
// grid. The grid's blocks are resident only once the data is in place: waiting in
// copy_prefix_grid's block 0 held up to 256 blocks on the GPU per receive, and a few such
// receives at once (several streams) could fill it, while the kernels that write the data —
// the sender's, under MPS on this very GPU — waited for room.
__global__ void gate_then_publish(const volatile unsigned long long *len, int slot) {
  griddep_wait();
  if (threadIdx.x != 0) return;
  const LenWords w = load_len(len);
  wait_gate(w);
  volatile unsigned long long *s = g_fuse_slots[slot];
  s[1] = w.total;
  s[2] = w.from;
  s[4] = w.done;
  s[5] = w.done_value;
}

// The grid after gate_then_publish (which ended before this kernel reads: stream order, or
// griddepcontrol.wait when launched as a programmatic dependent).
__global__ void copy_prefix_gated(char *dst, const char *src, unsigned long long max,
                                  volatile unsigned long long *len, unsigned long long skip,
                                  int slot) {
  griddep_wait();
  volatile unsigned long long *s = g_fuse_slots[slot];
  const unsigned long long total = s[1], from = s[2], done = s[4], done_value = s[5];
  unsigned long long n = total > skip ? total - skip : 0;
  if (n > max) n = max;
  copy_bytes(dst, from ? reinterpret_cast<const char *>(from) : src, n);
  announce_copied(len, from, done, done_value, const_cast<unsigned long long *>(&s[3]), gridDim.x);
}

}  // namespace

namespace {

// Launches @p kernel with @p args converted to its parameters' exact types (CudaApi::launch
// passes their addresses).
template <class... P, class... A>
Status launch_kernel(void (*kernel)(P...), unsigned blocks, unsigned threads, cudaStream_t s,
                     A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "one argument per parameter");
  std::tuple<P...> values(static_cast<P>(args)...);
  return std::apply(
      [&](auto &...v) {
        void *params[] = {static_cast<void *>(&v)...};
        return CudaApi::launch(reinterpret_cast<const void *>(kernel), blocks, threads, s, params);
      },
      values);
}

}  // namespace

int CudaApi::fuse_slot_acquire() {
  static std::atomic<int> next{0};
  const int i = next.fetch_add(1, std::memory_order_relaxed);
  return i < kFuseSlots ? i : -1;
}

Status CudaApi::copy_write_kernel(stream_t s, void *dst, const void *src, std::size_t bytes,
                                  uint64_t dev_word, uint64_t value) {
  return launch_kernel(copy_then_store, 1, 256, s, dst, src, bytes,
                       reinterpret_cast<unsigned long long *>(dev_word), value);
}

Status CudaApi::waits_copy_write_kernel(stream_t s, uint64_t marks, std::size_t nmarks,
                                        uint64_t mark, const ThenWaits &first, void *dst,
                                        const void *src, std::size_t bytes, uint64_t dev_word,
                                        uint64_t value, bool local_dst) {
  return launch_kernel(waits_copy_store, 1, 256, s,
                       reinterpret_cast<const unsigned long long *>(marks), nmarks, mark, first,
                       dst, src, bytes, reinterpret_cast<unsigned long long *>(dev_word), value,
                       local_dst);
}

Status CudaApi::copies_write_kernel(stream_t s, const ThenWaits &then) {
  return launch_kernel(copies_then_store, 1, 256, s, then);
}

// A fused receive's grid: a block per 4 KiB, up to 16 (the copy reads pinned host memory, whose
// latency the loads of many blocks in flight hide), where the stream has a slot for the grid.
unsigned CudaApi::fused_receive_blocks(std::size_t max_bytes, int slot) {
  const std::size_t want = (max_bytes + 4095) / 4096;
  return slot < 0 || want <= 1 ? 1u : want < 16 ? static_cast<unsigned>(want) : 16u;
}

bool CudaApi::fused_receive_one_block(std::size_t max_bytes, int slot) {
  return fused_receive_blocks(max_bytes, slot) == 1;
}

Status CudaApi::wait_copy_prefix_kernel(stream_t s, uint64_t dev_word, uint64_t value, void *dst,
                                        const void *src, std::size_t max_bytes,
                                        const uint64_t *len_word, int slot, uint64_t ticket,
                                        const ThenWaits &then) {
  const unsigned blocks = fused_receive_blocks(max_bytes, slot);
  if (blocks > 1) {
    return launch_kernel(wait_then_copy_grid, blocks, 256, s,
                         reinterpret_cast<const unsigned long long *>(dev_word), value, dst, src,
                         max_bytes,
                         reinterpret_cast<unsigned long long *>(const_cast<uint64_t *>(len_word)),
                         slot, ticket, then);
  }
  return launch_kernel(
      wait_then_copy, 1, 256, s, reinterpret_cast<const unsigned long long *>(dev_word), value, dst,
      src, max_bytes, reinterpret_cast<unsigned long long *>(const_cast<uint64_t *>(len_word)),
      then);
}

Status CudaApi::wait_copy_many_kernel(stream_t s, const FusedReceives &r, int slot, uint64_t ticket,
                                      const ThenWaits &then) {
  if (r.n == 0 || r.n > FusedReceives::kMax)
    return make_status(MPI_ERR_INTERN, "%u fused receives for one kernel", r.n);
  unsigned blocks = 0;
  for (unsigned i = 0; i < r.n; ++i) {
    if (r.blocks[i] == 0 || r.blocks[i] > 16 || (r.blocks[i] > 1 && (slot < 0 || !r.dst[i])))
      return make_status(MPI_ERR_INTERN, "fused receive %u of a kernel on %u blocks", i,
                         static_cast<unsigned>(r.blocks[i]));
    blocks += r.blocks[i];
  }
  return launch_kernel(wait_then_copy_many, blocks, 256, s, r, slot,
                       static_cast<unsigned long long>(ticket), then);
}

Status CudaApi::copy_prefix_kernel(stream_t s, void *dst, const void *src, std::size_t max_bytes,
                                   const uint64_t *len_word, uint64_t skip, int slot,
                                   uint64_t ticket, bool gated) {
  if (max_bytes == 0) return {};
  // About 16 KiB per block (four 16-byte words a thread, loaded together: copy_strided), at
  // most 256 blocks of 256 threads: a GPU-direct copy of up to 4 MiB waits for one memory
  // latency, not four (before copy_strided each word waited for the one before), and a
  // host-to-device copy keeps four reads in flight per thread. One block for small messages.
  const std::size_t want = (max_bytes + 16383) / 16384;
  unsigned blocks = want < 256 ? static_cast<unsigned>(want) : 256u;
  // Without the stream's device words the blocks cannot tell which finished last (a GPU-direct
  // message's copy is announced once all have): one block.
  if (slot < 0) blocks = 1;
  // A message that may come from an announced send waits for its sender's data with at most
  // kGatedBlocks blocks on the GPU; a larger grid waits behind a one-thread gate
  // (gate_then_publish: one launch more, for messages past 256 KiB).
  constexpr unsigned kGatedBlocks = 16;
  if (gated && blocks > kGatedBlocks) {
    auto *len = reinterpret_cast<unsigned long long *>(const_cast<uint64_t *>(len_word));
    MPIX_TRY(launch_kernel(gate_then_publish, 1, 32, s, len, slot));
    return launch_kernel(copy_prefix_gated, blocks, 256, s, dst, src, max_bytes, len, skip, slot);
  }
  if (blocks > 1) {
    return launch_kernel(copy_prefix_grid, blocks, 256, s, dst, src, max_bytes,
                         reinterpret_cast<unsigned long long *>(const_cast<uint64_t *>(len_word)),
                         skip, slot, ticket);
  }
  return launch_kernel(copy_prefix, blocks, 256, s, dst, src, max_bytes,
                       reinterpret_cast<unsigned long long *>(const_cast<uint64_t *>(len_word)),
                       skip);
}

Status CudaApi::copy_runs_kernel(stream_t s, void *dst, const void *src, const CopyRun *runs,
                                 std::size_t n) {
  if (n == 0) return {};
  const unsigned blocks = n < 1024 ? static_cast<unsigned>(n) : 1024u;
  return launch_kernel(copy_run_table, blocks, 256, s, dst, src, runs, n);
}

Status CudaApi::copy_list_kernel(stream_t s, const CopyPiece *pieces, std::size_t n) {
  if (n == 0) return {};
  const unsigned blocks = n < 1024 ? static_cast<unsigned>(n) : 1024u;
  return launch_kernel(copy_piece_list, blocks, 256, s, pieces, n);
}

Status CudaApi::kernel_write(stream_t s, uint64_t dev_word, uint64_t value) {
  return launch_kernel(store_word, 1, 1, s, reinterpret_cast<unsigned long long *>(dev_word),
                       value);
}

Status CudaApi::kernel_wait(stream_t s, uint64_t dev_word, uint64_t value) {
  return launch_kernel(wait_word, 1, 1, s, reinterpret_cast<const unsigned long long *>(dev_word),
                       value);
}

Status CudaApi::ops_kernel(stream_t s, const OpList &l) {
  if (l.n == 0 || l.n > OpList::kMax)
    return make_status(MPI_ERR_INTERN, "%u stream operations for one kernel", l.n);
  return launch_kernel(run_ops, 1, 1, s, l);
}

Status CudaApi::load_kernels() {
  cudaFuncAttributes a;
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, run_ops));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, store_word));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, wait_word));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_run_table));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_piece_list));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_prefix));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_prefix_grid));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, gate_then_publish));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_prefix_gated));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copy_then_store));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, waits_copy_store));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, wait_then_copy));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, wait_then_copy_grid));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, wait_then_copy_many));
  MPIX_CUDA_CHECK(cudaFuncGetAttributes(&a, copies_then_store));
  return {};
}

}  // namespace mpix
