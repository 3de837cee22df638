// The stream-backend interface: one per kind of stream (host, cuda, hip). A backend executes
// work in stream order on a native stream: 64-bit writes and waits on signal memory, host
// functions, copies. Each implementation lives in its own folder under src/gpu/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/copy_run.hpp"
#include "base/status.hpp"

namespace mpix {

enum class StreamKind { general, host, cuda, hip };
const char *stream_kind_name(StreamKind k);

// How a GPU stream signals the agent and waits for completions (DESIGN.md §3).
enum class TriggerMode { memop, hostfn, kernel };
const char *trigger_mode_name(TriggerMode m);

// Where a buffer lives, as the backend sees it.
enum class MemKind { host, pinned_host, device, managed };
const char *mem_kind_name(MemKind k);
// Backend::classify_at's device for memory that belongs to no one device (managed, pinned).
constexpr int kAnyDevice = -1;

// One stream memory operation of ExecStream::batch. @p word is signal memory (host memory the
// backend maps for its devices), or, with @p device_word, a word in the stream's device memory
// (a write only; GPU backends only): what kernels read without crossing to host memory.
// A wait may name a second way to be released: @p alt_word (a word in the stream's device
// memory, or null) reaching @p alt_value. A kernel that waits takes whichever comes first; a
// stream memory operation waits on @p word alone, which must be written in any case (a
// GPU-direct send's completion word, and the word its receiver's copy kernel writes: Op::
// peer_done).
struct StreamMemOp {
  enum Kind : uint8_t { write, wait } kind;
  uint64_t *word;
  uint64_t value;
  bool device_word = false;
  const uint64_t *alt_word = nullptr;
  uint64_t alt_value = 0;
};

// Writes and waits as one kernel takes them (a batch of the kernel trigger mode's, on a GPU
// backend with kernels): in array order, by one thread; word: device addresses; bit i of
// waits: op i waits (else it writes). A kernel argument, passed by value.
struct OpList {
  static constexpr unsigned kMax = 32;
  unsigned n;
  uint32_t waits;
  uint64_t word[kMax], value[kMax];
};

// Waits a GPU backend's fused receive kernel makes after its copy (ExecStream::
// wait_then_copy_prefix): the first n of word (device addresses) until each reaches its value,
// or its alt_word (a device address, 0: none) reaches its alt_value (StreamMemOp::alt_word);
// and what it does before it waits (PreWork): the npre copies {pre_dst, pre_src, pre_len}, then
// the write of pre_value to pre_word (a device address; 0: none). A kernel argument, passed by
// value.
struct ThenWaits {
  uint64_t word[4];
  uint64_t value[4];
  uint64_t alt_word[4];
  uint64_t alt_value[4];
  unsigned n;
  unsigned npre;
  uint32_t tiny_flag;  // a tiny receive's flag (TinyWords), or 0: its words are not written
  uint64_t pre_word, pre_value;
  uint64_t pre_dst[4], pre_src[4], pre_len[4];
};

// One staged receive of a group that a GPU stream waits for and copies in with one kernel,
// a block per receive (ExecStream::wait_then_copy_prefix_many): wait_then_copy_prefix's
// arguments. @p dst null: only the wait (a receive the host copied in already).
struct FusedReceive {
  const uint64_t *word;
  uint64_t value;
  void *dst;
  const void *src;
  std::size_t max_bytes;
  const uint64_t *len_word;
  uint32_t tiny_flag;
};
// FusedReceive as the CUDA kernel takes it (a kernel argument, passed by value: a launch takes up
// to kMax receives, on up to kMaxBlocks blocks; blocks: each receive's, 1 to 16). All of a
// launch's blocks may wait at once: kMaxBlocks keeps them few beside the kernels that write the
// data, which may run on the same GPU (two ranks under MPS; results-gpu.md, session 34).
struct FusedReceives {
  static constexpr unsigned kMax = 16;
  static constexpr unsigned kMaxBlocks = 64;
  unsigned n;
  uint8_t blocks[kMax];
  uint32_t tiny_flag[kMax];
  uint64_t word[kMax], value[kMax], dst[kMax], src[kMax], max[kMax], len[kMax];
};

// What a fused receive does before it waits (ExecStream::wait_then_copy_prefix): a stream's
// deferred copies out (Stream::defer_copy; dense, each small enough for one kernel, plain
// addresses), then its deferred trigger write, which the awaited op may need to be posted.
struct PreWork {
  StreamMemOp write;
  const CopyPiece *copies = nullptr;
  std::size_t ncopies = 0;
};

// A tiny staged receive's message in flagged words (the low-latency layout NCCL's LL protocol
// uses), which a GPU backend's fused receive kernel polls beside the op's completion word: when
// every word it needs carries the receive's flag, it has the message, with no second read of
// pinned host memory (~1 PCIe round trip, 1-1.4 us, after the completion word). Each word is 8
// bytes, written and read whole (single-copy atomic): the flag in the high half, 4 bytes of
// payload (word 0: the received length) in the low half. The words follow the receive's length
// words (StagedBuffers::len_word + kLenWords, where the kernel finds them as len + kAt). The flag
// is the receive's own (StagedBuffers::tiny_flag, from a process-wide counter, never 0), so a
// word a former use of the buffer left does not pass for this one's unless its 32 bits match —
// in every word the receive needs (at least two). The stager writes them last, just before the
// completion word (Stager::on_release). Where they are not all flagged when the completion word
// is reached, the kernel reads the length words as before.
struct TinyWords {
  // The largest receive buffer: its words and the completion word are one load of a 256-thread
  // block.
  static constexpr std::size_t kBytes = 1016;
  static constexpr std::size_t kWords = 1 + kBytes / 4;  // length + payload
  static constexpr std::size_t kAt = 8;                  // len_word + kAt
  static constexpr uint64_t word(uint32_t flag, uint32_t v) {
    return static_cast<uint64_t>(flag) << 32 | v;
  }
  // Words a receive buffer of @p max bytes needs.
  static constexpr std::size_t words(std::size_t max) { return 1 + (max + 3) / 4; }
};

// An array of device words that must each reach one value (the device marks of a direct
// partitioned round, partitioned/direct_link.hpp): n words from word (a device address).
struct MarkWait {
  const uint64_t *word = nullptr;
  std::size_t n = 0;
  uint64_t value = 0;
};

// What a GPU stream asks the driver about a copy's two buffers (can a kernel on its device reach
// both; is the destination that device's memory), kept by a caller that copies between the same
// two buffers round after round -- a direct partitioned round, whose buffers live as long as
// its request -- so that the driver is asked once, not three times a round (~0.3 us a query
// under MPS: docs/results-partitioned.md, session 39).
struct CopyFacts {
  bool known = false;
  bool kernel_reaches = false;
  bool dst_on_device = false;
};

// One native stream, driven in stream order.
class ExecStream {
 public:
  virtual ~ExecStream() = default;
  // Stores @p value to @p word once earlier work on the stream has run.
  virtual Status write_value(uint64_t *word, uint64_t value) = 0;
  // Later work runs once (int64_t)(*word - value) >= 0.
  virtual Status wait_value(const uint64_t *word, uint64_t value) = 0;
  // Several writes and waits, in array order; one call where the backend can batch them
  // (cuStreamBatchMemOp).
  virtual Status batch(const StreamMemOp *ops, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      Status st = ops[i].kind == StreamMemOp::write ? write_value(ops[i].word, ops[i].value)
                                                    : wait_value(ops[i].word, ops[i].value);
      if (!st.is_ok()) return st;
    }
    return {};
  }
  // Runs @p fn(@p arg) on a host thread in stream order. @p fn must not call the GPU runtime.
  virtual Status launch_host(void (*fn)(void *), void *arg) = 0;
  // Stream-ordered copy of @p bytes (any direction the backend supports).
  virtual Status copy_async(void *dst, const void *src, std::size_t bytes) = 0;
  // Stream-ordered copy of the blocks of @p runs only, each from @p src + offset to @p dst +
  // offset: bytes between the blocks are neither read nor written. The table @p runs must be
  // in pinned host memory (Backend::alloc_pinned; a GPU backend may read it from a kernel) and
  // stay untouched until the stream has run the copy.
  virtual Status copy_runs_async(void *dst, const void *src, const CopyRun *runs, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      for (uint64_t k = 0; k < runs[i].count; ++k) {
        const uint64_t off = runs[i].offset + k * runs[i].stride;
        Status st = copy_async(static_cast<char *>(dst) + off, static_cast<const char *>(src) + off,
                               runs[i].len);
        if (!st.is_ok()) return st;
      }
    return {};
  }
  // Whether copy_prefix_async can copy a staged receive on this stream (a GPU backend needs a
  // kernel that reaches the bounce buffer, the length words beside it and the receive buffer):
  // @p user_device as can_fuse_staged's.
  virtual bool can_copy_prefix_staged(int user_device) {
    (void)user_device;
    return false;
  }
  // Stream-ordered copy of the first min(*@p len_word - @p skip, @p max_bytes) bytes from
  // @p src to @p dst (none if *@p len_word <= @p skip), the length read when the stream runs the
  // copy, not when it is enqueued: a staged receive copies only the bytes of the message that
  // arrived, whose length the agent stores before it releases the stream; @p skip is where
  // @p dst lies in the message (a piece of a chunked one). @p len_word lives in pinned memory
  // and has four words: [0] the length; [1] where to copy from when not @p src (0: @p src; else
  // a GPU-direct message's address, read at run time too); [3] set to 1 once a copy from [1]
  // has run (the sender may reuse its buffer); [2] is the staging's own; [4..5] a word and the
  // value it must reach before the copy from [1] may start (an announced send's data in place,
  // Stager::deliver_from). @p gated: the receive may get such a message (a GPU stream then
  // waits for it with few threads on the GPU).
  virtual Status copy_prefix_async(void *dst, const void *src, std::size_t max_bytes,
                                   const uint64_t *len_word, uint64_t skip = 0,
                                   bool gated = false) {
    (void)dst;
    (void)src;
    (void)max_bytes;
    (void)len_word;
    (void)skip;
    (void)gated;
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "this stream cannot copy a length known only at run time");
  }
  // The most bytes a GPU stream copies inside its fused kernels (can_fuse_copy).
  static constexpr std::size_t kMaxFusedCopy = 64 * 1024;
  // A staged send's last two steps as one: the copy of @p bytes from @p src to @p dst, then the
  // store of @p value to @p word, in stream order. Small copies on a GPU stream are done by one
  // kernel that copies and then stores (can_fuse_copy), saving a copy-engine operation and the
  // hand-over between the copy engine and the stream's memory operation.
  virtual bool can_fuse_copy(const void *dst, const void *src, std::size_t bytes) {
    (void)dst;
    (void)src;
    (void)bytes;
    return false;
  }
  // can_fuse_copy of a staged copy, without asking the driver: one end a bounce buffer of
  // mpix's (pinned host memory mapped for every device, or this stream's device's memory), the
  // other a device or managed buffer staging located (Backend::classify_at: @p user_device,
  // kAnyDevice for managed memory). Two pointer queries fewer per staged op (0.2-0.3 us each
  // under CUDA MPS, docs/results-gpu.md "Session 29").
  virtual bool can_fuse_staged(std::size_t bytes, int user_device) {
    (void)bytes;
    (void)user_device;
    return false;
  }
  // @p device_word: @p word is a device word (StreamMemOp::device_word), not signal memory.
  virtual Status copy_then_write(void *dst, const void *src, std::size_t bytes, uint64_t *word,
                                 uint64_t value, bool device_word = false) {
    MPIX_TRY(copy_async(dst, src, bytes));
    const StreamMemOp op{StreamMemOp::write, word, value, device_word};
    return batch(&op, 1);
  }
  // copy_then_write where can_fuse_copy(@p dst, @p src, @p bytes) said yes: a GPU stream's one
  // kernel, without asking the driver about the buffers again.
  virtual Status fused_copy_then_write(void *dst, const void *src, std::size_t bytes,
                                       uint64_t *word, uint64_t value) {
    return copy_then_write(dst, src, bytes, word, value);
  }
  // The waits of @p marks and of @p waits, then copy_then_write(@p dst, @p src, @p bytes,
  // @p word, @p value, @p device_word) (a direct partitioned round's copy). A GPU stream waits
  // in one kernel whose threads poll the marks side by side, where the other waits are few
  // (kMaxThenWaits), and copies in that kernel too where can_fuse_copy says so.
  // @p facts (may be null): what a GPU stream learns of @p dst and @p src on its first call,
  // used on the later ones (CopyFacts).
  virtual Status waits_copy_then_write(const MarkWait &marks, const StreamMemOp *waits,
                                       std::size_t nwaits, void *dst, const void *src,
                                       std::size_t bytes, uint64_t *word, uint64_t value,
                                       bool device_word, CopyFacts *facts = nullptr) {
    (void)facts;  // a GPU stream's (gpu_exec_stream.hpp)
    std::vector<StreamMemOp> all;
    all.reserve(marks.n + nwaits);
    for (std::size_t i = 0; i < marks.n; ++i)
      all.push_back({StreamMemOp::wait, const_cast<uint64_t *>(marks.word + i), marks.value, true});
    all.insert(all.end(), waits, waits + nwaits);
    MPIX_TRY(batch(all.data(), all.size()));
    return copy_then_write(dst, src, bytes, word, value, device_word);
  }
  // A staged receive's two steps as one: wait until *@p word reaches @p value, then
  // copy_prefix_async(@p dst, @p src, @p max_bytes, @p len_word) (one kernel that spins, then
  // copies; the caller asked can_fuse_staged first: Stager::fuses_copy_in); then the @p nthen
  // waits of
  // @p then (other requests of one MPIX_Waitall_enqueue), which the same kernel makes after its
  // copy where it can (at most kMaxThenWaits), instead of a stream operation of their own.
  // @p pre (or null): done first, before the wait, by the same kernel where it can.
  static constexpr std::size_t kMaxThenWaits = sizeof(ThenWaits::word) / sizeof(uint64_t);
  // @p tiny_flag (nonzero): the receive's message also comes in flagged words (TinyWords).
  virtual Status wait_then_copy_prefix(const uint64_t *word, uint64_t value, void *dst,
                                       const void *src, std::size_t max_bytes,
                                       const uint64_t *len_word, uint32_t tiny_flag,
                                       const StreamMemOp *then, std::size_t nthen,
                                       const PreWork *pre = nullptr) {
    (void)tiny_flag;
    if (pre) MPIX_TRY(run_pre(*pre));
    MPIX_TRY(wait_value(word, value));
    MPIX_TRY(copy_prefix_async(dst, src, max_bytes, len_word));
    return nthen ? batch(then, nthen) : Status{};
  }
  // Several fused receives of one MPIX_Waitall_enqueue in one stream operation where the stream
  // can (fuses_many said yes for each): a GPU stream's one kernel, each receive on its blocks,
  // instead of a kernel launch per receive (~4 us of host time each under CUDA MPS). @p pre (or
  // null) goes before every wait; the @p nthen waits of @p then after the copies (in the kernel
  // where they are few). Here, as wait_then_copy_prefix for one receive after the other.
  virtual bool fuses_many(std::size_t max_bytes) const {
    (void)max_bytes;
    return false;
  }
  // Whether the waits of a Waitall on this stream take a wait's alt_word (StreamMemOp): a GPU's
  // kernels (ThenWaits) do, a stream memory operation waits on its word alone; a host stream's
  // worker does (batch) with MPIX_HOST_IPC.
  virtual bool waits_either() const { return false; }
  // (@p n >= 1; wait_then_copy_prefix's pre and then with the first and the last.)
  Status wait_then_copy_prefix_each(const FusedReceive *r, std::size_t n, const StreamMemOp *then,
                                    std::size_t nthen, const PreWork *pre) {
    for (std::size_t i = 0; i < n; ++i) {
      const bool last = i + 1 == n;
      const PreWork *p = i == 0 ? pre : nullptr;
      if (!r[i].dst) {  // only the wait
        if (p) MPIX_TRY(run_pre(*p));
        MPIX_TRY(wait_value(r[i].word, r[i].value));
        if (last && nthen) MPIX_TRY(batch(then, nthen));
        continue;
      }
      MPIX_TRY(wait_then_copy_prefix(r[i].word, r[i].value, r[i].dst, r[i].src, r[i].max_bytes,
                                     r[i].len_word, r[i].tiny_flag, last ? then : nullptr,
                                     last ? nthen : 0, p));
    }
    return {};
  }
  virtual Status wait_then_copy_prefix_many(const FusedReceive *r, std::size_t n,
                                            const StreamMemOp *then, std::size_t nthen,
                                            const PreWork *pre) {
    return wait_then_copy_prefix_each(r, n, then, nthen, pre);
  }
  // In stream order, @p n copies (plain addresses), then the write of @p value to @p word: a
  // stream's deferred copies out and trigger. A GPU stream copies up to kMaxPreCopies small
  // pieces in one kernel that then stores (as copy_then_write does one).
  static constexpr std::size_t kMaxPreCopies = sizeof(ThenWaits::pre_dst) / sizeof(uint64_t);
  virtual Status copies_then_write(const CopyPiece *pieces, std::size_t n, uint64_t *word,
                                   uint64_t value) {
    for (std::size_t i = 0; i < n; ++i)
      MPIX_TRY(copy_async(reinterpret_cast<void *>(pieces[i].dst),
                          reinterpret_cast<const void *>(pieces[i].src),
                          static_cast<std::size_t>(pieces[i].len)));
    return write_value(word, value);
  }
  // @p pre as stream operations of its own.
  Status run_pre(const PreWork &pre) {
    if (pre.ncopies)
      return copies_then_write(pre.copies, pre.ncopies, pre.write.word, pre.write.value);
    return batch(&pre.write, 1);
  }
  // Blocks the calling thread until all work enqueued so far has run.
  virtual Status synchronize() = 0;
  virtual TriggerMode trigger_mode() const = 0;
  virtual void *native() const = 0;
  // The device the stream belongs to; -1 for a host stream.
  virtual int device() const { return -1; }
  // Whether the native stream can still take work; checked before an op is made, so that a
  // stream destroyed behind mpix's back fails the call with nothing left behind.
  virtual Status check_live() const { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual StreamKind kind() const = 0;
  virtual const char *name() const = 0;
  // Wraps @p native (a cudaStream_t, hipStream_t or mpix_host_stream_t; may be null for a
  // host stream the backend creates and owns).
  virtual Status open_stream(void *native, TriggerMode mode, std::unique_ptr<ExecStream> *out) = 0;
  virtual MemKind classify(const void *p) const = 0;
  // classify, and in *@p device the device whose memory @p p is (device memory), else
  // kAnyDevice: in the one driver query, what a stream's kernel needs to know of a buffer
  // (ExecStream::can_fuse_staged).
  virtual MemKind classify_at(const void *p, int *device) const {
    *device = kAnyDevice;
    return classify(p);
  }
  // Whether a backend of host streams has device memory all the same: the host backend's
  // stand-in for tests (MPIX_HOST_IPC, gpu/host/host_ipc.hpp), which host streams then stage.
  virtual bool emulates_device_memory() const { return false; }
  // Page-locked host memory for staging device buffers.
  virtual Status alloc_pinned(std::size_t bytes, void **p) = 0;
  virtual void free_pinned(void *p) = 0;
  // Device memory of @p device that mpix keeps for the process's life (a GPU-direct send's
  // bounce buffer, core/staging/bounce_pool.hpp); only where the backend has CUDA IPC.
  virtual Status alloc_device(int device, std::size_t bytes, void **p) {
    (void)device;
    (void)bytes;
    (void)p;
    return no_ipc();
  }
  // A new non-blocking stream of mpix's own on @p device (never destroyed: work may still be
  // queued on it when its user lets go; the caller keeps it for reuse), for stream work that
  // must neither wait behind nor hold up the agent's side stream or a user's stream: a
  // partitioned request's direct rounds driven from the host (partitioned/direct_link.hpp).
  // Only where the backend has CUDA IPC.
  virtual Status open_private_stream(int device, std::unique_ptr<ExecStream> *out) {
    (void)device;
    (void)out;
    return no_ipc();
  }
  // Blocking copy on the calling thread, outside every user stream (a staged receive completed
  // with MPI_Wait on the host). Any direction the backend supports.
  virtual Status copy_sync(void *dst, const void *src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
    return {};
  }
  // Blocking copy of the blocks of @p runs only (see ExecStream::copy_runs_async), like
  // copy_sync.
  virtual Status copy_runs_sync(void *dst, const void *src, const CopyRun *runs, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      for (uint64_t k = 0; k < runs[i].count; ++k) {
        const uint64_t off = runs[i].offset + k * runs[i].stride;
        std::memcpy(static_cast<char *>(dst) + off, static_cast<const char *>(src) + off,
                    runs[i].len);
      }
    return {};
  }
  // A copy the agent thread issues for a small staged message (core/stager.hpp), outside every
  // user stream, on the backend's side stream of @p device (-1: the calling thread's current
  // device). Returns at once with a ticket; agent_copy_done(@p device, ticket) tells when this
  // copy and every earlier one of that device have run. Called from the agent thread only.
  // The default copies on the calling thread (host memory only) and is done at once.
  virtual Status agent_copy(int device, void *dst, const void *src, std::size_t bytes,
                            uint64_t *ticket) {
    (void)device;
    std::memcpy(dst, src, bytes);
    *ticket = 0;
    return {};
  }
  virtual bool agent_copy_done(int device, uint64_t ticket) {
    (void)device;
    (void)ticket;
    return true;
  }
  // agent_copy, never waited for in the call, whatever its size, and whose completion is
  // written only by the next agent_copy_flush(@p device) (or a later agent_copy): copies issued
  // in a row then share one completion write and run back to back. The caller must flush
  // before it waits for the ticket. @p on_device: @p dst and @p src are device or managed
  // memory (a kernel may copy them; host memory may be pageable, which only the copy engine
  // reaches).
  virtual Status agent_copy_deferred(int device, void *dst, const void *src, std::size_t bytes,
                                     bool on_device, uint64_t *ticket) {
    (void)on_device;
    return agent_copy(device, dst, src, bytes, ticket);
  }
  virtual Status agent_copy_flush(int device) {
    (void)device;
    return {};
  }
  // CUDA IPC (same-node GPU-direct, providers/mpi/ipc_path.hpp). ipc_range: the start and
  // size of the device allocation holding @p p and its buffer id (unique per allocation for the
  // process's life, so a freed and re-made allocation at the same address has another); fails
  // where @p p is not device memory (host, pinned or managed).
  // ipc_handle: the IPC handle of the allocation starting at @p base. ipc_open: maps an
  // allocation another process exported into this one, on @p device, until ipc_close; on a
  // refusal because the memory is mapped here already under another handle (CUDA's
  // cudaErrorAlreadyMapped: the exporter freed an allocation that this process still maps and
  // made another at the same place in the same memory block), *@p in_use is set.
  // ipc_device_uuid: the device's UUID, so that ranks can tell whether they share a GPU;
  // ipc_can_reach: whether @p device can map memory of the device with UUID @p uuid (the same
  // GPU, or a visible peer with peer access).
  virtual Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) {
    (void)p;
    (void)base;
    (void)size;
    (void)buffer_id;
    return no_ipc();
  }
  // The range [*start, *start + *size) of the allocation that holds @p p in this process (for
  // a pointer ipc_open returned: the exported allocation's extent; CUDA maps the whole memory
  // block the allocation lies in, so that the block's other allocations are mapped too).
  virtual Status ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) {
    (void)p;
    (void)start;
    (void)size;
    return no_ipc();
  }
  virtual Status ipc_handle(uint64_t base, unsigned char (&handle)[64]) {
    (void)base;
    (void)handle;
    return no_ipc();
  }
  virtual Status ipc_open(int device, const unsigned char (&handle)[64], void **base,
                          bool *in_use) {
    (void)device;
    (void)handle;
    (void)base;
    *in_use = false;
    return no_ipc();
  }
  virtual void ipc_close(int device, void *base) {
    (void)device;
    (void)base;
  }
  virtual Status ipc_device_uuid(int device, unsigned char (&uuid)[16]) {
    (void)device;
    (void)uuid;
    return no_ipc();
  }
  virtual bool ipc_can_reach(int device, const unsigned char (&uuid)[16]) {
    (void)device;
    (void)uuid;
    return false;
  }
  // One-line description for mpix_info (devices, versions, what was found).
  virtual std::string describe() const = 0;

 private:
  static Status no_ipc() {
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "this stream backend has no IPC");
  }
};

// The backend of a kind, or an error saying it was not built / has no device.
Status backend_get(StreamKind kind, Backend **out);
// Backends compiled into this build ("host cuda" ...).
const char *backends_built();

}  // namespace mpix
