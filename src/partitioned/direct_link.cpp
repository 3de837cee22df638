#include "partitioned/direct_link.hpp"

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/ipc_exports.hpp"
#include "gpu/ipc_map_cache.hpp"
#include "gpu/ipc_slabs.hpp"

namespace mpix {
namespace {

constexpr std::size_t kSlotBytes = 4 * sizeof(uint64_t);  // LinkSlot's words, and one spare

// What this process mapped of its receivers' slabs and buffers (never closed: a stream of this
// process may still copy into one when its request is freed; CUDA unmaps at exit).
struct Maps {
  std::mutex mu;
  IpcMapCache cache;
};
Maps &maps() {
  static auto *m = new Maps;
  return *m;
}

// Private streams for host-driven rounds, per (backend, device), reused.
struct Streams {
  std::mutex mu;
  std::map<std::pair<Backend *, int>, std::vector<std::unique_ptr<ExecStream>>> free;
};
Streams &streams() {
  static auto *s = new Streams;
  return *s;
}

}  // namespace

Status link_slot_acquire(Backend *be, int device, LinkSlot *out) {
  IpcSlabPiece p;
  MPIX_TRY(ipc_slab_take(be, device, kSlotBytes, &p));
  out->words = p.words;
  out->slab_base = p.slab_base;
  out->slab_id = p.slab_id;
  out->slab_bytes = p.slab_bytes;
  return {};
}

const char *direct_side_refusal(const DirectSide &s) {
  if (!s.setting_on) return "MPIX_PARTITIONED_DIRECT=off";
  if (!s.has_peer) return "the peer is MPI_PROC_NULL";
  if (!s.pair_direct)
    return "the two ranks are no GPU-direct pair on this communicator (not a CUDA stream "
           "communicator, another node, no peer access, or MPIX_GPU_DIRECT=off)";
  if (!s.cuda || !s.device_memory) return "the buffer is not cudaMalloc memory";
  if (s.bytes <= 0) return "the buffer holds no bytes";
  return nullptr;
}

const char *direct_answer_refusal(const char *own, int64_t send_bytes, int64_t recv_bytes) {
  if (own) return own;
  if (send_bytes != recv_bytes) return "the send and receive buffers differ in size";
  return nullptr;
}

Status direct_reply_fill(Backend *be, const void *buf, uint64_t bytes, const LinkSlot &slot,
                         uint64_t rbase, DirectReply *out) {
  DirectReply r;
  r.magic = kDirectReplyMagic;
  r.host = ipc_host_hash();
  r.pid = static_cast<int64_t>(getpid());
  r.rbase = rbase;
  uint64_t size = 0;
  MPIX_TRY(be->ipc_range(buf, &r.buf_base, &size, &r.buf_id));
  r.buf_offset = reinterpret_cast<uint64_t>(buf) - r.buf_base;
  if (r.buf_offset + bytes > size)
    return make_status(MPI_ERR_BUFFER, "the receive buffer runs past its allocation");
  // Where an allocation exported before was freed and this one took its place, the sender may
  // still map the old one: its mapping cache then reaches the new one through the old mapping
  // (gpu/ipc_map_cache.hpp), or it fails and confirms the agents' path.
  MPIX_TRY(ipc_exports().handle(r.buf_base, size, r.buf_id, be, r.buf_handle));
  r.slab_base = slot.slab_base;
  r.slab_id = slot.slab_id;
  r.slot_offset = reinterpret_cast<uint64_t>(slot.words) - slot.slab_base;
  MPIX_TRY(ipc_exports().handle(slot.slab_base, slot.slab_bytes, slot.slab_id, be, r.slab_handle));
  r.accept = 1;
  *out = r;
  return {};
}

Status direct_map(const DirectReply &r, Backend *be, int device, uint64_t bytes,
                  DirectTarget *out) {
  Maps &m = maps();
  std::lock_guard<std::mutex> lk(m.mu);
  char *buf = nullptr, *slab = nullptr;
  const IpcMapCache::Key kb{r.host,   r.pid,        r.buf_base,
                            r.buf_id, r.buf_handle, r.buf_offset + bytes};
  MPIX_TRY(m.cache.map(kb, be, device, &buf));
  // CUDA may map only part of an allocation made where a freed one lay (gpu/ipc_exports.hpp):
  // the copy must land inside what is mapped.
  uint64_t lo = 0, size = 0;
  const char *dst = buf + r.buf_offset;
  if (be->ipc_mapped_range(dst, &lo, &size).is_ok() &&
      reinterpret_cast<uint64_t>(dst) + bytes > lo + size)
    return make_status(MPI_ERR_BUFFER,
                       "only %llu bytes of the receiver's %llu-byte buffer are mapped here",
                       static_cast<unsigned long long>(lo + size - reinterpret_cast<uint64_t>(dst)),
                       static_cast<unsigned long long>(bytes));
  const IpcMapCache::Key ks{r.host,    r.pid,         r.slab_base,
                            r.slab_id, r.slab_handle, r.slot_offset + kSlotBytes};
  MPIX_TRY(m.cache.map(ks, be, device, &slab));
  out->dst = buf + r.buf_offset;
  out->open = reinterpret_cast<uint64_t *>(slab + r.slot_offset);
  out->arrived = out->open + 1;
  out->rbase = r.rbase;
  return {};
}

Status direct_stream_acquire(Backend *be, int device, std::unique_ptr<ExecStream> *out) {
  {
    Streams &s = streams();
    std::lock_guard<std::mutex> lk(s.mu);
    auto &v = s.free[std::make_pair(be, device)];
    if (!v.empty()) {
      *out = std::move(v.back());
      v.pop_back();
      return {};
    }
  }
  return be->open_private_stream(device, out);
}

void direct_stream_release(Backend *be, int device, std::unique_ptr<ExecStream> s) {
  if (!s) return;
  Streams &st = streams();
  std::lock_guard<std::mutex> lk(st.mu);
  st.free[std::make_pair(be, device)].push_back(std::move(s));
}

}  // namespace mpix
