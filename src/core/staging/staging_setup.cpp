// staging_setup (core/stager.hpp): which buffers of an op are staged, and which stager copies
// them, decided once per op on the enqueuing thread.
#include <memory>
#include <utility>

#include "base/block_allocator.hpp"
#include "base/log.hpp"
#include "core/op.hpp"
#include "core/provider.hpp"
#include "core/stager.hpp"
#include "core/staging/agent_stager.hpp"
#include "core/staging/pipelined_stager.hpp"
#include "core/staging/staging_settings.hpp"
#include "core/staging/stream_stager.hpp"
#include "gpu/backend.hpp"

namespace mpix {
namespace {

// A stager whose memory comes from a free list (base/block_allocator.hpp): made here on the
// enqueuing thread, it is freed by the agent when the op retires.
template <typename S, typename... Args>
std::shared_ptr<Stager> make_stager(Args &&...args) {
  return std::allocate_shared<S>(BlockAllocator<S>(), std::forward<Args>(args)...);
}

// Receives of at most this many bytes copy in with the stream's length-reading kernel; larger
// ones fill the bounce buffer first and copy in whole with the copy engine. The kernel reads
// pinned host memory, which measured far slower than the copy engine (4 MiB: ~2.2 ms against
// ~0.1 ms, one H200): above this two copy-engine copies are cheaper, except for a pipelined
// receive, whose pieces need the length, and one a direct path may deliver in place.
constexpr std::size_t kClipKernelMax = 4096;

// A receive that may get a GPU-direct message holds a bounce buffer of this many bytes at first
// (StagedBuffers::stage's short_max): a message the peer sends from its device memory needs
// none, and one that comes the staged way and is longer takes a whole buffer when it comes
// (Stager::receive_space). Eager messages and the halos of most codes fit.
constexpr std::size_t kShortBounce = 64 * 1024;

// MPIX_AGENT_COPY_MAX: the agent copies when every copy is dense and at most that long.
bool agent_copies(const StagedBuffers &b) {
  static const long most = setting_long(StagingSetting::agent_copy_max);
  if (most == 0) return false;
  auto small = [&](const StagedCopy &c) {
    return !c.runs && (most < 0 || c.bytes <= static_cast<std::size_t>(most));
  };
  for (int i = 0; i < b.nout; ++i)
    if (!small(b.out[i])) return false;
  return !b.has_in || small(b.in);
}

// MPIX_STAGING_HOST (tests): host streams stage their host buffers too.
bool stage_host() {
  static const bool on = setting_long(StagingSetting::staging_host) != 0;
  return on;
}

}  // namespace

bool staging_possible(const Backend &be) {
  return be.kind() != StreamKind::host || stage_host() || be.emulates_device_memory();
}

Status staging_setup(Op &op, const StagingPlan &plan) {
  if (op.count == 0) return {};
  Backend &be = *plan.backend;
  // Classify the first byte the datatype touches, not the buffer argument: with a positive
  // true lower bound (a subarray, say) the argument may lie before the allocation, where the
  // GPU runtime sees no device memory at all.
  // Named types start at their buffer; only a derived one (held as a duplicate) needs asking,
  // which keeps the MPI call off the enqueue path of the common case.
  MPI_Count tlb = 0, text = 0;
  if (op.dt_owned) MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(op.dt, &tlb, &text));
  const bool host_staged = stage_host() && be.kind() == StreamKind::host;
  // *device: whose memory (StagedCopy::user_device), so that the stream's fusion checks need
  // not ask the driver again.
  auto needs = [&](const void *p, int *device) {
    *device = kAnyDevice;
    if (!p || p == MPI_IN_PLACE) return false;
    if (host_staged) return true;
    MemKind mk = be.classify_at(static_cast<const char *>(p) + tlb, device);
    return mk == MemKind::device || mk == MemKind::managed;
  };
  int send_device = kAnyDevice, recv_device = kAnyDevice;
  const bool s =
      (op.kind == OpKind::send || op.kind == OpKind::allreduce) && needs(op.sbuf, &send_device);
  const bool r =
      (op.kind == OpKind::recv || op.kind == OpKind::allreduce) && needs(op.rbuf, &recv_device);
  if (!s && !r) return {};
  StagedBuffers b(&be);
  if (plan.device_copy) {
    // A GPU-direct send from a device copy: one dense copy on the stream into a device bounce
    // buffer of the stream's device, from which the provider sends (Provider::reads_device).
    if (op.kind != OpKind::send || !s || !plan.exec)
      return make_status(MPI_ERR_INTERN, "a device copy is for a send on a stream");
    b.bounce_device = plan.exec->device();
    char *view = nullptr;
    Status st = b.stage(const_cast<char *>(static_cast<const char *>(op.sbuf)), op.count, op.dt,
                        &b.out[0], &view, false);
    b.out[0].user_device = send_device;
    if (st.is_ok()) {
      b.nout = 1;
      op.sbuf = view;
      op.stager = make_stager<StreamStager>(std::move(b), false);
      return {};
    }
    // No device buffer apart from the exported ones: staged through host memory after all.
    MPIX_LOG(debug, "stream", "staging: no device copy for a GPU-direct send (%s); staged",
             st.what().c_str());
    b.bounce_device = -1;
  }
  if (s) {
    char *view = nullptr;
    MPIX_TRY(b.stage(const_cast<char *>(static_cast<const char *>(op.sbuf)), op.count, op.dt,
                     &b.out[b.nout], &view, false));
    b.out[b.nout++].user_device = send_device;
    op.sbuf = view;
  }
  // A receive a direct path may fill (Provider::may_deliver_device) starts with a short bounce
  // buffer, where its copy in can read the length at run time (it then also reads where the
  // message is); a receive staged otherwise (below) takes a whole one after all.
  const bool deliverable = r && op.kind == OpKind::recv && plan.provider->may_deliver_device(op);
  const bool maybe_direct = deliverable && !plan.agent_always && !plan.chunk && plan.exec;
  // A reduction result of a named datatype gets length words that always say the whole buffer
  // (StreamStager::on_done leaves them), so that one small enough for a fused receive
  // (MPIX_STAGING_FUSE_IN_MAX; `clip` below decides by its size) is copied in as a receive's
  // is, and a blocking allreduce is one stream operation: that kernel also copies the input out
  // and writes the trigger (enqueue_op; a kernel of its own first where the receive takes more
  // than one block).
  const bool whole_in =
      r && op.kind == OpKind::allreduce && !op.dt_owned && !plan.agent_always && plan.exec;
  if (r) {
    char *view = nullptr;
    b.short_ok = op.kind == OpKind::recv;
    MPIX_TRY(b.stage(static_cast<char *>(op.rbuf), op.count, op.dt, &b.in, &view,
                     b.short_ok || whole_in, maybe_direct ? kShortBounce : 0));
    b.in.user_device = recv_device;
    b.has_in = true;
    // An in-place allreduce reads its input from the receive buffer too.
    if (op.kind == OpKind::allreduce && op.sbuf == MPI_IN_PLACE) b.out[b.nout++] = b.in;
    op.rbuf = view;
  }
  if (plan.agent_always) {
    for (int i = 0; i < b.nout; ++i)
      if (b.out[i].runs)
        return make_status(MPI_ERR_TYPE,
                           "a device buffer with a non-contiguous datatype cannot be staged "
                           "here (the agent copies dense ranges only)");
    if (b.has_in && b.in.runs)
      return make_status(MPI_ERR_TYPE,
                         "a device buffer with a non-contiguous datatype cannot be staged "
                         "here (the agent copies dense ranges only)");
    op.stager = make_stager<AgentStager>(std::move(b), plan.device, 0);
    return {};
  }
  // Only a predefined datatype is chunked: its bytes in memory are its bytes on the wire, so
  // a piece is a plain byte range whatever the receiver's datatype. A chunked send keeps the
  // stream's piece-by-piece copies, each followed by its trigger.
  const std::size_t chunk = plan.chunk;
  if (chunk && op.kind == OpKind::send && !op.dt_owned && !b.out[0].runs &&
      b.out[0].bytes > chunk) {
    op.stager = make_stager<PipelinedStager>(std::move(b), chunk);
    return {};
  }
  // A receive on a chunk-enabled communicator that may get a chunked message.
  const std::size_t recv_chunk =
      chunk && b.short_ok && !op.dt_owned && !b.in.runs && b.in.bytes > chunk ? chunk : 0;
  if (plan.agent_copies && agent_copies(b)) {
    op.stager = make_stager<AgentStager>(std::move(b), plan.exec->device(), recv_chunk);
    return {};
  }
  // A receive copies in only the message's bytes: by length where the stream can read the
  // length at run time (see core/stager.hpp). A receive a direct path may deliver straight into
  // its device buffer (Provider::may_deliver_device) goes by length whatever its size, so that
  // its copy in copies nothing over a delivered message.
  const StagedCopy &in = b.in;
  const bool direct = b.short_ok && !in.runs && deliverable;
  const bool clip = (b.short_ok || whole_in) && !in.runs &&
                    (in.bytes <= kClipKernelMax || recv_chunk || direct ||
                     (in.bytes <= StreamStager::fused_copy_in_max() &&
                      plan.exec->can_fuse_staged(in.bytes, in.user_device))) &&
                    b.len_word && plan.exec->can_copy_prefix_staged(in.user_device);
  if (b.short_ok && b.in_cap < in.bytes && !(clip && direct && !recv_chunk)) {
    // A short bounce buffer, but a copy in that cannot read where the message is: stage again
    // with a whole one (the short one goes back to the pool at once).
    char *view = nullptr;
    MPIX_TRY(b.restage_in_whole(op.count, op.dt, &view));
    op.rbuf = view;
  }
  const uint64_t in_bytes = b.in.bytes;
  if (clip && recv_chunk) op.stager = make_stager<PipelinedStager>(std::move(b), chunk);
  else
    op.stager = make_stager<StreamStager>(
        std::move(b), clip, direct, direct && plan.provider->direct_waits_for_receive(in_bytes));
  return {};
}

}  // namespace mpix
