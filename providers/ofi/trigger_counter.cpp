#include "providers/ofi/trigger_counter.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/stream.hpp"
#include "providers/ofi/ofi_check.hpp"

namespace mpix {

StreamCounters::StreamCounters(Fabric &fabric) : fabric_(fabric) {
  long s = setting_long(Setting::ofi_cntr_start);
  // The first threshold is start + 1, so the start itself may be at most kMaxThreshold - 1.
  start_ = static_cast<uint64_t>(std::clamp<long>(s, 0, TriggerCounter::kMaxThreshold - 1));
  ops_per_cntr_ = static_cast<uint64_t>(std::max<long>(1, setting_long(Setting::ofi_cntr_ops)));
}

Status StreamCounters::next(const std::shared_ptr<Stream> &stream,
                            std::shared_ptr<TriggerCounter> *cntr, uint64_t *threshold) {
  std::lock_guard<std::mutex> lk(mu_);
  if (++arms_since_sweep_ >= 1024) sweep();
  Entry &e = streams_[stream.get()];
  if (e.stream.lock() != stream) {
    // New stream (or a new stream at a freed one's address): start over.
    e.stream = stream;
    e.current.reset();
  }
  if (!e.current || e.current->next > TriggerCounter::kMaxThreshold ||
      e.current->next > start_ + ops_per_cntr_) {
    auto c = std::make_shared<TriggerCounter>();
    MPIX_TRY(fabric_.open_counter(&c->fid));
    MPIX_OFI_CHECK(fi_cntr_set(c->fid.get(), start_));
    c->next = start_ + 1;
    c->generation = e.current ? e.current->generation + 1 : 0;
    ++opened_;
    MPIX_LOG(debug, "ofi", "stream %llu: trigger counter #%llu starts at %llu",
             static_cast<unsigned long long>(stream->id()),
             static_cast<unsigned long long>(c->generation),
             static_cast<unsigned long long>(start_));
    e.current = std::move(c);
  }
  *threshold = e.current->next++;
  *cntr = e.current;
  return {};
}

void StreamCounters::unget(TriggerCounter &cntr, uint64_t threshold) {
  std::lock_guard<std::mutex> lk(mu_);
  if (cntr.next == threshold + 1) cntr.next = threshold;
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
