#include "partitioned/direct_link.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "gpu/backend.hpp"
#include "gpu/gpu_settings.hpp"
#include "gpu/ipc_exports.hpp"
#include "partitioned/prequest.hpp"
#include "partitioned/round_mirror.hpp"

namespace mpix {
namespace {

// A link's device words, in 8-byte words: [0] blocks finished (counter), [1] open (receiver),
// then per partition: arrived (receiver), blocks through it (sender, counter), and the device
// address of the request's partition word.
constexpr std::size_t kOpenWord = 1, kFirstPartWord = 2;
std::size_t block_words(int partitions) {
  return kFirstPartWord + 3 * static_cast<std::size_t>(partitions);
}

uint64_t host_hash() {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  return static_cast<uint64_t>(std::hash<std::string>{}(name)) | 1;  // 0: unknown
}

// Kept for the process's life: a peer may still map the words of a freed request's link (they
// serve the next link of the same size), and the receivers' buffers this process mapped stay
// mapped (CUDA unmaps only by waiting for the device; a reused mapping needs no new one).
struct Pools {
  std::mutex mu;
  std::multimap<std::pair<int, std::size_t>, char *> blocks;  // (device, bytes) -> free block
  std::multimap<int, void *> streams;                         // device -> free stream
  std::map<std::tuple<uint64_t, int64_t, uint64_t, int>, char *> maps;  // peer allocation
};
Pools &pools() {
  static auto *p = new Pools;
  return *p;
}

// The peer allocation @p id of process (@p host, @p pid), mapped on @p device.
Status map_peer(Backend *be, int device, uint64_t host, int64_t pid, uint64_t id,
                const unsigned char (&handle)[64], char **base) {
  Pools &p = pools();
  std::lock_guard<std::mutex> lk(p.mu);
  const auto key = std::make_tuple(host, pid, id, device);
  auto it = p.maps.find(key);
  if (it != p.maps.end()) {
    *base = it->second;
    return {};
  }
  void *b = nullptr;
  bool in_use = false;
  MPIX_TRY(be->ipc_open(device, handle, &b, &in_use));
  p.maps.emplace(key, static_cast<char *>(b));
  *base = static_cast<char *>(b);
  return {};
}

// The allocation holding @p p: its id, @p p's offset in it and its IPC handle.
Status export_range(Backend *be, const void *p, uint64_t *id, uint64_t *offset,
                    unsigned char (&handle)[64]) {
  uint64_t base = 0, size = 0;
  MPIX_TRY(be->ipc_range(p, &base, &size, id));
  if (ipc_exports().overlaps_other(base, size, *id))
    return make_status(MPI_ERR_OTHER,
                       "the buffer lies where an allocation exported before and since freed "
                       "lay (a peer may still map that one)");
  MPIX_TRY(ipc_exports().handle(base, size, *id, be, handle));
  *offset = reinterpret_cast<uint64_t>(p) - base;
  return {};
}

}  // namespace

DirectSide direct_side_of(Backend *be, int device, const void *buf) {
  DirectSide s;
  if (!be || device < 0 || !buf || be->kind() != StreamKind::cuda) return s;
  if (std::strcmp(setting_str(GpuSetting::partitioned_direct), "auto") != 0) return s;
  if (be->classify(buf) != MemKind::device) return s;
  if (!be->ipc_device_uuid(device, s.uuid).is_ok()) return s;
  s.host = host_hash();
  s.pid = static_cast<int64_t>(getpid());
  s.wants = true;
  return s;
}

void direct_offer_encode(const DirectSide &s, int64_t (&words)[kOfferWords]) {
  std::memset(words, 0, sizeof words);
  if (!s.wants) return;
  words[0] = kDirectOfferMagic;
  words[1] = static_cast<int64_t>(s.host);
  words[2] = s.pid;
  std::memcpy(&words[3], s.uuid, 16);
}

bool direct_offer_decode(const int64_t (&words)[kOfferWords], DirectSide *s) {
  *s = DirectSide{};
  if (words[0] != kDirectOfferMagic) return false;
  s->wants = true;
  s->host = static_cast<uint64_t>(words[1]);
  s->pid = words[2];
  std::memcpy(s->uuid, &words[3], 16);
  return true;
}

const char *direct_refusal(const DirectSide &me, const DirectSide &peer, bool reachable,
                           bool same_layout) {
  if (!peer.wants) return "the sender's buffer is not device memory, or GPU-direct is off there";
  if (!me.wants)
    return "this receive buffer is not device memory of a CUDA stream's device, or "
           "MPIX_PARTITIONED_DIRECT=off";
  if (me.host != peer.host) return "another node";
  if (me.pid == peer.pid) return "the same process";
  if (!reachable) return "this GPU cannot map the sender's GPU memory (no peer access)";
  if (!same_layout) return "the two sides have different partitions";
  return nullptr;
}

Status DirectLink::make(Backend *be, int device, const PWords &w,
                        std::unique_ptr<DirectLink> *out) {
  std::unique_ptr<DirectLink> l(new DirectLink);
  l->be_ = be;
  l->device_ = device;
  l->partitions_ = static_cast<int>(w.part.size());
  l->block_bytes_ = block_words(l->partitions_) * sizeof(uint64_t);
  Pools &p = pools();
  {
    std::lock_guard<std::mutex> lk(p.mu);
    auto b = p.blocks.find({device, l->block_bytes_});
    if (b != p.blocks.end()) {
      l->block_ = b->second;
      p.blocks.erase(b);
    }
    auto s = p.streams.find(device);
    if (s != p.streams.end()) {
      l->stream_ = s->second;
      p.streams.erase(s);
    }
  }
  // From here on the destructor gives back what was taken.
  l->cancel_ = signal_pool().acquire();
  store_signal(l->cancel_.word, 0);  // values only grow: round indices start at 1
  if (!l->block_) {
    void *b = nullptr;
    MPIX_TRY(be->alloc_device(device, l->block_bytes_, &b));
    l->block_ = static_cast<char *>(b);
  }
  if (!l->stream_) MPIX_TRY(be->round_stream(device, &l->stream_));
  // Counters and marks at 0 (rounds count from 1), then the partition words' device addresses.
  std::vector<uint64_t> image(block_words(l->partitions_), 0);
  uint64_t *table = image.data() + kFirstPartWord + 2 * static_cast<std::size_t>(l->partitions_);
  for (int i = 0; i < l->partitions_; ++i)
    MPIX_TRY(be->device_address(w.part[static_cast<std::size_t>(i)].word, &table[i]));
  MPIX_TRY(device_write(be, device, l->block_, image.data(), l->block_bytes_));
  *out = std::move(l);
  return {};
}

DirectLink::~DirectLink() {
  Pools &p = pools();
  {
    std::lock_guard<std::mutex> lk(p.mu);
    if (block_) p.blocks.emplace(std::make_pair(device_, block_bytes_), block_);
    if (stream_) p.streams.emplace(device_, stream_);
  }
  if (cancel_.word) signal_pool().release(cancel_);
}

Status DirectLink::accept(Backend *be, int device, void *buf, const PWords &w,
                          std::unique_ptr<DirectLink> *out, DirectReply *reply) {
  std::unique_ptr<DirectLink> l;
  MPIX_TRY(make(be, device, w, &l));
  *reply = DirectReply{};
  reply->magic = kDirectReplyMagic;
  MPIX_TRY(export_range(be, buf, &reply->buf_id, &reply->buf_offset, reply->buf_handle));
  MPIX_TRY(export_range(be, l->block_, &reply->flags_id, &reply->flags_offset,
                        reply->flags_handle));
  reply->host = host_hash();
  reply->pid = static_cast<int64_t>(getpid());
  reply->accept = 1;
  l->open_ = reinterpret_cast<uint64_t *>(l->block_) + kOpenWord;
  l->arrived_ = reinterpret_cast<uint64_t *>(l->block_) + kFirstPartWord;
  *out = std::move(l);
  return {};
}

Status DirectLink::connect(Backend *be, int device, const void *buf, uint64_t part_bytes,
                           const PWords &w, const DirectReply &reply,
                           std::unique_ptr<DirectLink> *out) {
  if (reply.magic != kDirectReplyMagic || !reply.accept)
    return make_status(MPI_ERR_OTHER, "the receiver did not accept GPU-direct rounds");
  char *peer_buf = nullptr, *peer_flags = nullptr;
  MPIX_TRY(map_peer(be, device, reply.host, reply.pid, reply.buf_id, reply.buf_handle, &peer_buf));
  MPIX_TRY(map_peer(be, device, reply.host, reply.pid, reply.flags_id, reply.flags_handle,
                    &peer_flags));
  std::unique_ptr<DirectLink> l;
  MPIX_TRY(make(be, device, w, &l));
  l->send_ = true;
  l->part_bytes_ = part_bytes;
  l->src_ = static_cast<const char *>(buf);
  l->dst_ = peer_buf + reply.buf_offset;
  auto *flags = reinterpret_cast<uint64_t *>(peer_flags + reply.flags_offset);
  l->open_ = flags + kOpenWord;
  l->arrived_ = flags + kFirstPartWord;
  // Blocks enough for the copy engines' rate on large partitions, one for small ones: every
  // block waits for every partition.
  const uint64_t total = part_bytes * static_cast<uint64_t>(l->partitions_);
  l->grid_ = static_cast<int>(std::clamp<uint64_t>(total / (256u << 10), 1, 32));
  *out = std::move(l);
  return {};
}

Status DirectLink::launch(const PWords &w, uint64_t r) {
  PartitionRound a;
  a.send = send_;
  a.partitions = partitions_;
  a.part_bytes = part_bytes_;
  a.r = r;
  a.R = w.R(r);
  a.round = w.round.word;
  a.cancel = cancel_.word;
  a.done = w.done.word;
  auto *words = reinterpret_cast<uint64_t *>(block_);
  const std::size_t n = static_cast<std::size_t>(partitions_);
  a.parts = reinterpret_cast<uint64_t *const *>(words + kFirstPartWord + 2 * n);
  a.blocks = reinterpret_cast<unsigned long long *>(words);
  a.pcounts = reinterpret_cast<unsigned long long *>(words + kFirstPartWord + n);
  a.src = src_;
  a.dst = dst_;
  a.open = open_;
  a.arrived = arrived_;
  a.grid = send_ ? grid_ : 1;
  return be_->partition_round(device_, stream_, a);
}

void DirectLink::cancel(uint64_t r) {
  if (static_cast<int64_t>(load_signal(cancel_.word) - r) < 0) store_signal(cancel_.word, r);
}

}  // namespace mpix
