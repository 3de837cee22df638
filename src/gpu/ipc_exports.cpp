#include "gpu/ipc_exports.hpp"

#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>

#include "gpu/backend.hpp"

namespace mpix {

bool IpcExports::overlaps_other(uint64_t start, uint64_t size, uint64_t buffer_id) {
  std::lock_guard<std::mutex> lk(mu_);
  const auto first = map_.lower_bound(start);
  for (auto it = first; it != map_.end() && it->first < start + size; ++it)
    if (it->second.buffer_id != buffer_id) return true;
  for (auto it = first; it != map_.begin();) {  // those starting below that reach into it
    --it;
    if (it->first + max_size_ <= start) break;
    if (it->first + it->second.size > start && it->second.buffer_id != buffer_id) return true;
  }
  return false;
}

Status IpcExports::handle(uint64_t start, uint64_t size, uint64_t buffer_id, Backend *be,
                          unsigned char (&out)[64]) {
  std::lock_guard<std::mutex> lk(mu_);
  Entry &e = map_[start];
  if (e.buffer_id != buffer_id || e.size == 0) {
    Status st = be->ipc_handle(start, e.handle);
    if (!st.is_ok()) {
      if (e.size == 0) map_.erase(start);  // nothing exported here after all
      return st;
    }
    e.buffer_id = buffer_id;
    e.size = size;
    if (size > max_size_) max_size_ = size;
  }
  std::memcpy(out, e.handle, sizeof out);
  return {};
}

uint64_t ipc_host_hash() {
  static const uint64_t h = [] {
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    return static_cast<uint64_t>(std::hash<std::string>{}(name)) | 1;  // 0: unknown
  }();
  return h;
}

IpcExports &ipc_exports() {
  static IpcExports *e = new IpcExports;
  return *e;
}

}  // namespace mpix
