#include "providers/ofi/soft_match.hpp"

#include <algorithm>

#include "providers/ofi/ofi_op.hpp"

namespace mpix {

bool SoftQueues::post(OfiOp *o, Unexpected *out) {
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(), [o](const Unexpected &u) {
    return soft_matches(o->tag, o->ignore, u.hdr.match);
  });
  if (it == unexpected_.end()) {
    posted_.push_back(o);
    return false;
  }
  *out = std::move(*it);
  unexpected_.erase(it);
  return true;
}

OfiOp *SoftQueues::arrive(const SoftHeader &h, const char *data, std::size_t len) {
  auto it = std::find_if(posted_.begin(), posted_.end(),
                         [&h](const OfiOp *o) { return soft_matches(o->tag, o->ignore, h.match); });
  if (it != posted_.end()) {
    OfiOp *o = *it;
    posted_.erase(it);
    return o;
  }
  Unexpected u;
  u.hdr = h;
  u.data.assign(data, data + len);
  unexpected_.push_back(std::move(u));
  return nullptr;
}

bool SoftQueues::remove(OfiOp *o) {
  auto it = std::find(posted_.begin(), posted_.end(), o);
  if (it == posted_.end()) return false;
  posted_.erase(it);
  return true;
}

}  // namespace mpix
