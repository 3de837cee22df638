#include "gpu/host/host_ipc.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "gpu/gpu_settings.hpp"

namespace mpix {
namespace {

constexpr uint64_t kHandleMagic = 0x6d7069782d697063ULL;  // "mpix-ipc"

struct HandleBytes {
  uint64_t magic;
  int64_t pid;
  int64_t fd;
  uint64_t size;
  uint64_t id;
};
static_assert(sizeof(HandleBytes) <= 64, "a handle is 64 bytes");

struct Alloc {
  uint64_t size;
  int fd;
  uint64_t id;
};

struct Registry {
  std::mutex mu;
  std::map<uint64_t, Alloc> allocs;     // by start: this process's allocations
  std::map<uint64_t, uint64_t> mapped;  // by start: peers' allocations mapped here, their size
  uint64_t next_id = 1;
};

// Never destroyed: the agent and host streams may look up memory up to process exit.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

// The entry of @p m whose range holds @p p, or m.end().
template <class Map, class SizeOf>
typename Map::const_iterator holding(const Map &m, const void *p, SizeOf size_of) {
  const auto a = reinterpret_cast<uint64_t>(p);
  auto it = m.upper_bound(a);
  if (it == m.begin()) return m.end();
  --it;
  return a < it->first + size_of(it->second) ? it : m.end();
}

}  // namespace

bool host_ipc_on() {
  static const bool on = std::strcmp(setting_str(GpuSetting::host_ipc), "on") == 0;
  return on;
}

void *host_ipc_alloc(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  const int fd = memfd_create("mpix-host-ipc", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return nullptr;
  }
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.allocs[reinterpret_cast<uint64_t>(p)] = Alloc{bytes, fd, r.next_id++};
  return p;
}

void host_ipc_free(void *p) {
  if (!p) return;
  Registry &r = registry();
  Alloc a{};
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.allocs.find(reinterpret_cast<uint64_t>(p));
    if (it == r.allocs.end()) return;
    a = it->second;
    r.allocs.erase(it);
  }
  munmap(p, a.size);
  close(a.fd);
}

bool host_ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = holding(r.allocs, p, [](const Alloc &a) { return a.size; });
  if (it == r.allocs.end()) return false;
  *base = it->first;
  *size = it->second.size;
  *buffer_id = it->second.id;
  return true;
}

Status host_ipc_handle(uint64_t base, unsigned char (&handle)[64]) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.allocs.find(base);
  if (it == r.allocs.end())
    return make_status(MPI_ERR_ARG, "host IPC: no allocation of host_ipc_alloc starts at %#llx",
                       static_cast<unsigned long long>(base));
  const HandleBytes h{kHandleMagic, static_cast<int64_t>(getpid()), it->second.fd, it->second.size,
                      it->second.id};
  std::memset(handle, 0, sizeof handle);
  std::memcpy(handle, &h, sizeof h);
  return {};
}

Status host_ipc_open(const unsigned char (&handle)[64], void **base) {
  HandleBytes h;
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kHandleMagic) return make_status(MPI_ERR_ARG, "host IPC: not a handle");
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/fd/%lld", static_cast<long long>(h.pid),
                static_cast<long long>(h.fd));
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return make_status(MPI_ERR_OTHER, "host IPC: cannot open %s (%s)", path, std::strerror(errno));
  void *p = mmap(nullptr, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);  // the mapping keeps the memory
  if (p == MAP_FAILED)
    return make_status(MPI_ERR_OTHER, "host IPC: cannot map %s (%s)", path, std::strerror(err));
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.mapped[reinterpret_cast<uint64_t>(p)] = h.size;
  *base = p;
  return {};
}

void host_ipc_close(void *base) {
  Registry &r = registry();
  uint64_t size = 0;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.mapped.find(reinterpret_cast<uint64_t>(base));
    if (it == r.mapped.end()) return;
    size = it->second;
    r.mapped.erase(it);
  }
  munmap(base, size);
}

bool host_ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = holding(r.mapped, p, [](uint64_t s) { return s; });
  if (it == r.mapped.end()) return false;
  *start = it->first;
  *size = it->second;
  return true;
}

}  // namespace mpix
