#include "providers/ofi/trigger_counter.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "core/stream.hpp"
#include "providers/ofi/ofi_check.hpp"
#include "providers/ofi/ofi_settings.hpp"

namespace mpix {

StreamCounters::StreamCounters(Fabric &fabric) : fabric_(fabric) {
  long s = setting_long(OfiSetting::ofi_cntr_start);
  // A chained counter's thresholds run from start + cap + 2 to start + 2 cap + 1 and its link
  // sits one past them: cap ops per counter fit below kMaxThreshold while 2 cap + 2 <= room.
  start_ = static_cast<uint64_t>(std::clamp<long>(s, 0, TriggerCounter::kMaxThreshold - 4));
  const uint64_t room = TriggerCounter::kMaxThreshold - start_;
  const auto per = static_cast<uint64_t>(std::max<long>(1, setting_long(OfiSetting::ofi_cntr_ops)));
  ops_per_cntr_ = std::max<uint64_t>(1, std::min(per, (room - 2) / 2));
}

Status StreamCounters::next(const std::shared_ptr<Stream> &stream, bool send,
                            std::shared_ptr<TriggerCounter> *cntr, uint64_t *threshold,
                            bool *bump_prev) {
  std::lock_guard<std::mutex> lk(mu_);
  if (++arms_since_sweep_ >= 1024) sweep();
  Entry &e = streams_[stream.get()];
  if (e.stream.lock() != stream) {
    // New stream (or a new stream at a freed one's address): start over.
    e.stream = stream;
    e.current[0].reset();
    e.current[1].reset();
    e.poisoned[0] = e.poisoned[1] = false;
  }
  if (e.poisoned[send ? 1 : 0])
    return make_status(
        MPI_ERR_OTHER,
        "an earlier enqueued %s on this stream failed after libfabric had taken it "
        "as a triggered op, which cannot be taken back: no later %s of this stream "
        "can be ordered behind it (use another stream, or MPIX_OFI_NATIVE_TRIGGER=0)",
        send ? "send" : "receive", send ? "send" : "receive");
  std::shared_ptr<TriggerCounter> &cur = e.current[send ? 1 : 0];
  if (!cur || cur->ops >= ops_per_cntr_) {
    auto c = std::make_shared<TriggerCounter>();
    MPIX_TRY(fabric_.open_counter(&c->fid));
    MPIX_OFI_CHECK(fi_cntr_set(c->fid.get(), start_));
    // Behind a link, thresholds start past what the agent's fires alone can reach.
    c->first = c->next = cur ? start_ + ops_per_cntr_ + 2 : start_ + 1;
    c->generation = cur ? cur->generation + 1 : 0;
    if (cur) {
      // The link: when the previous counter reaches cur->next (its last op's threshold + 1,
      // which only the bump at this counter's first fire gives) and every op before it in its
      // list has been posted, add ops_per_cntr_ + 1 here: more than this counter's fires.
      c->link_add.cntr = c->fid.get();
      c->link_add.value = ops_per_cntr_ + 1;
      c->link.threshold = cur->next;
      c->link.triggering_cntr = cur->fid.get();
      c->link.completion_cntr = nullptr;
      c->link.op_type = FI_OP_CNTR_ADD;
      c->link.op.cntr = &c->link_add;
      MPIX_OFI_CHECK(fi_control(&fabric_.domain()->fid, FI_QUEUE_WORK, &c->link));
      c->prev = cur;
    }
    ++opened_;
    MPIX_LOG(debug, "ofi", "stream %llu %s: trigger counter #%llu starts at %llu",
             static_cast<unsigned long long>(stream->id()), send ? "sends" : "receives",
             static_cast<unsigned long long>(c->generation),
             static_cast<unsigned long long>(start_));
    cur = std::move(c);
  }
  *threshold = cur->next++;
  ++cur->ops;
  *bump_prev = cur->generation > 0 && *threshold == cur->first;
  *cntr = cur;
  return {};
}

void StreamCounters::poison(const Stream *stream, bool send) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = streams_.find(stream);
  if (it != streams_.end()) it->second.poisoned[send ? 1 : 0] = true;
}

void StreamCounters::unget(TriggerCounter &cntr, uint64_t threshold) {
  std::lock_guard<std::mutex> lk(mu_);
  if (cntr.next == threshold + 1) {
    cntr.next = threshold;
    --cntr.ops;
  }
}

void StreamCounters::sweep() {
  arms_since_sweep_ = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (it->second.stream.expired()) it = streams_.erase(it);
    else ++it;
  }
}

uint64_t StreamCounters::opened() const {
  std::lock_guard<std::mutex> lk(mu_);
  return opened_;
}

void StreamCounters::clear() {
  std::lock_guard<std::mutex> lk(mu_);
  streams_.clear();
}

}  // namespace mpix
