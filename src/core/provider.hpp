// The provider interface: the network side of mpix (DESIGN.md §3). The agent hands it ops the
// streams have reached; it posts them, drives progress and reports completions. A provider with
// native triggers may post an op ahead of time, in arm(), gated on a counter, so that fire() is
// only a counter increment. One implementation per folder under providers/.
//
// Two slots, as NCCL has p2p transports and CollNet: the p2p provider (MPIX_PROVIDER) carries
// sends and receives; the collective provider carries allreduce. One provider may fill both
// (mpi does: ProviderCaps::collectives); provider ofi carries no collectives, and provider mpi
// fills the collective slot beside it (provider_choose). The agent drives both; each op goes
// to the provider of its slot (provider_for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace mpix {

struct Op;
enum class OpKind : uint8_t;
class Backend;
class ExecStream;

// What the stream must do to fire an op: Provider::arm's answer, which the stream scheduler
// runs in stream order once the op's data is ready (after its stager's copies out). Today it is
// always a write of the stream's trigger word, which the agent polls; a NIC's doorbell would be
// a write of another word, and a same-node path driven by the stream would add copies and flags.
struct FireRecipe {
  // Write `value` to `word`. Where `word` is the stream's trigger word, the scheduler may defer
  // the write and merge it with a later one (the word only grows: a larger value fires every op
  // below it too).
  uint64_t *word = nullptr;
  uint64_t value = 0;
  // Also write `ready_value` to `ready` (non-null) right before `word`, never deferred: a word
  // a peer watches to learn that the op's data is in place (an announced GPU-direct send,
  // providers/mpi/ipc_path.hpp), which no agent step may delay.
  uint64_t *ready = nullptr;
  uint64_t ready_value = 0;
};

// What a provider may need of a new stream communicator's stream (GPU-direct).
struct CommStreamInfo {
  Backend *backend = nullptr;   // the stream's backend; null for none or a general stream
  int device = -1;              // its device; -1 for a host stream
  bool host_functions = false;  // its triggers are host functions (TriggerMode::hostfn)
};

struct ProviderCaps {
  bool native_triggers = false;  // arm() posts the op; fire() is a counter increment
  bool device_memory = false;    // can read/write GPU memory without staging
  // Staged buffers may be copied by the agent thread around fire() and completion
  // (core/stager.hpp, MPIX_AGENT_COPY_MAX); otherwise the stream copies them.
  bool agent_copies = false;
  // Buffers go to the MPI library as they are: device buffers skip staging where that library
  // is CUDA-aware (gpu/gpu_aware_mpi.hpp, MPIX_CUDA_AWARE).
  bool mpi_buffers = false;
  // Carries ops on plain communicators too (no per-communicator state: it posts on the
  // communicator itself), as a queue made on MPI_COMM_WORLD needs.
  bool plain_comms = false;
  // Carries collectives (allreduce) too, so it fills the collective slot itself.
  bool collectives = false;
};

// A message of at most this many bytes is eager under every transport the providers use (Open
// MPI's vader and libfabric's shm: 4 KiB; tcp's rxm: 16 KiB): it moves whole once posted and
// completes without the peer polling for it.
constexpr std::size_t kEagerBytes = 4096;

// How a provider reads an op's device buffers (Provider::reads_device).
enum class DeviceRead { no, as_is, from_device_copy };

// Per-communicator provider state (addresses, context ids). Made collectively in comm_open.
// A communicator's context keeps the p2p provider's (CommCtx::prov), so a provider reaches
// its own through provider_comm<T>(op) (core/comm_ctx.hpp) and never sees another's.
class ProviderComm {
 public:
  virtual ~ProviderComm() = default;
  // Bytes per piece of a chunked staged send on this communicator (0: not chunked).
  virtual std::size_t staging_chunk() const { return 0; }
  // Whether device buffers move GPU to GPU between this rank and @p rank of the communicator
  // (provider mpi's same-node GPU-direct pair, decided collectively when the communicator was
  // opened on a stream): a partitioned request's rounds may then go direct too
  // (partitioned/direct_link.hpp).
  virtual bool gpu_direct_peer(int rank) const {
    (void)rank;
    return false;
  }
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const char *name() const = 0;
  virtual ProviderCaps caps() const = 0;
  // Collective over @p comm (called from MPIX_Stream_comm_create on every rank).
  virtual Status comm_open(MPI_Comm comm, std::unique_ptr<ProviderComm> *out) {
    (void)comm;
    out->reset();
    return {};
  }
  // comm_open, told about the communicator's stream (what MPIX_Stream_comm_create calls).
  virtual Status comm_open_on_stream(MPI_Comm comm, const CommStreamInfo &si,
                                     std::unique_ptr<ProviderComm> *out) {
    (void)si;
    return comm_open(comm, out);
  }
  // Local: state for a duplicate of a stream communicator (MPI_Comm_dup / idup keep the stream).
  virtual Status comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out) {
    (void)old;
    out->reset();
    return {};
  }
  // Checks that @p op can be carried (tag range, ...). Called on the enqueuing thread.
  virtual Status validate(const Op &op) {
    (void)op;
    return {};
  }
  // Enqueuing thread: whether the provider reads @p op's device buffers as they are (no
  // staging: every op where it can read device memory, some where it has a direct path), from a
  // device copy of mpix's (a GPU-direct send whose own buffer cannot be exported: the stream
  // copies it into a device bounce buffer first), or not at all (staged through host memory).
  virtual DeviceRead reads_device(const Op &op) {
    (void)op;
    return caps().device_memory ? DeviceRead::as_is : DeviceRead::no;
  }
  // Enqueuing thread: whether receive @p op may be written straight into its (staged) device
  // buffer by a direct path, so that its copy in must go by the received length.
  virtual bool may_deliver_device(const Op &op) {
    (void)op;
    return false;
  }
  // Enqueuing thread, for a receive of @p bytes may_deliver_device allows: whether a message
  // that fits may wait at its sender until this receive is posted (a direct path's send that
  // completes only once its receiver has copied it). The receive's trigger is then on the
  // message's critical path, and its stream writes it first, on its own
  // (Stager::triggers_first).
  virtual bool direct_waits_for_receive(uint64_t bytes) {
    (void)bytes;
    return false;
  }
  // Whether arm() does anything (set by a provider whose arm() may, at construction): the
  // enqueue path skips the call where it does not.
  bool arms_ops() const { return arms_ops_; }
  // Enqueuing thread, under the stream's enqueue mutex, before the stream can reach the op:
  // *@p fire holds the engine's way of firing it on @p ex (its trigger word, to the op's last
  // threshold); the provider may replace it. Native-trigger providers post here. Both null for
  // an op no stream fires now (a queue op, fired at MPIX_Enqueue_start; a gated op).
  virtual Status arm(Op &op, ExecStream *ex, FireRecipe *fire) {
    (void)op;
    (void)ex;
    (void)fire;
    return {};
  }
  // Whether take() does anything (set at construction by a provider whose take() may): the
  // agent skips the call where it does not.
  bool takes_ops() const { return takes_ops_; }
  // Agent thread, as it takes @p op from the enqueuing thread (ops in submit order), before
  // the stream reaches it: the provider may hand the network part of it now (a GPU-direct
  // send's announcement, providers/mpi/ipc_path.hpp). fire() or disarm() follows as for any op.
  virtual void take(Op &op) { (void)op; }
  // Agent thread: the stream reached @p op. Post it (or fire its counter).
  virtual Status fire(Op &op) = 0;
  // Agent thread: @p op, armed by arm(), leaves without fire(): it failed first (op_fail, a
  // failed copy out, an injected fault at fire). Drop what arm() made for it (Op::prov); the
  // agent then completes the op with its error.
  virtual void disarm(Op &op) { (void)op; }
  // Enqueuing thread, with the stream's enqueue mutex held: @p op, armed, will never be fired
  // (a later step of its enqueue failed; op_fail follows). A provider that handed the op to the
  // network at arm() must see to it that no later op's firing releases it.
  virtual void abandon(Op &op) { (void)op; }
  // Agent thread: drive progress; append completed ops (op.status filled) to @p done.
  // Returns true if anything happened.
  virtual bool progress(std::vector<Op *> &done) = 0;
  // Agent thread: whether ops are posted and not yet complete.
  virtual bool busy() const = 0;
  // Agent thread: whether a posted transfer moves only while this rank calls into the network
  // (one of more than kEagerBytes, say): the agent then keeps its core between polls, yielding
  // once per MPIX_BUSY_POLL_US. While busy() without it, where CPUs are few, the agent yields at
  // every poll, so that the threads a small message waits for run.
  virtual bool large_in_flight() const { return busy(); }
  // At MPI_Finalize, after the agent thread stopped (~Runtime): drop resources.
  virtual void shutdown() {}
  // One-line description for mpix_info.
  virtual std::string describe() const = 0;

 protected:
  bool arms_ops_ = true;
  bool takes_ops_ = false;
};

// The p2p provider of this process (the Runtime's, core/runtime.hpp), chosen on first use
// (MPIX_PROVIDER); an error names what was asked and what was tried.
Status provider_get(Provider **out);
// The provider that carries ops of @p kind: the collective slot's for allreduce, else the p2p
// one (the same object where the p2p provider carries collectives).
Status provider_for(OpKind kind, Provider **out);
// Why the provider in use was chosen (for mpix_info).
std::string provider_choice_reason();
// Makes the provider MPIX_PROVIDER names (providers/registry.cpp); *reason says why it was taken.
// The Runtime calls it once and owns the result; at MPI_Finalize, once the agent thread has
// stopped, it calls shutdown() — ofi closes its endpoint, so that libfabric's shm unlinks its
// shared-memory region instead of leaving it in /dev/shm for a later process with the same pid.
Status provider_choose(std::unique_ptr<Provider> *out, std::string *reason);
// The collective slot's provider for @p p2p: null when @p p2p carries collectives itself, else
// made by the first provider built that can fill the slot (ProviderEntry::make_collective).
Status collective_provider_choose(const Provider &p2p, std::unique_ptr<Provider> *out);
// Providers compiled into this build ("mpi ofi").
const char *providers_built();

}  // namespace mpix
