// Test helper: makes the next thread creation (its stack mapping) fail for real, by lowering
// RLIMIT_AS to just above the address space in use, so that calls which start a thread can be
// tested on their failure path. RLIMIT_NPROC would not do: root ignores it. Sanitizer builds
// reserve their shadow memory lazily and would fail on the limit themselves: there the tests
// skip (address_space_limit_usable()).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace mpix_test {

inline bool address_space_limit_usable() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

// Bytes of address space this process maps now (/proc/self/statm).
inline unsigned long long address_space_in_use() {
  unsigned long long pages = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
}

// While alive: at most @p headroom more bytes may be mapped (less than one thread stack, more
// than a few small heap allocations need). Restores the old soft limit when destroyed.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(unsigned long long headroom = 512 * 1024) {
    ok_ = getrlimit(RLIMIT_AS, &old_) == 0;
    if (!ok_) return;
    rlimit lim = old_;
    lim.rlim_cur = static_cast<rlim_t>(address_space_in_use() + headroom);
    ok_ = setrlimit(RLIMIT_AS, &lim) == 0;
  }
  ~AddressSpaceLimit() { restore(); }
  void restore() {
    if (ok_) setrlimit(RLIMIT_AS, &old_);
    ok_ = false;
  }
  bool ok() const { return ok_; }
  AddressSpaceLimit(const AddressSpaceLimit &) = delete;
  AddressSpaceLimit &operator=(const AddressSpaceLimit &) = delete;

 private:
  rlimit old_{};
  bool ok_ = false;
};

}  // namespace mpix_test
