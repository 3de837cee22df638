// The libfabric functions provider ofi calls, defined here and forwarded to libfabric opened at
// run time (base/runtime_lib.hpp): libmpix does not link libfabric, so it loads on machines
// without it, and provider ofi reports why it cannot run there. Everything else the provider
// uses (fi_tsendmsg, fi_cq_read, ...) is an inline call through the objects these return.
// When the library is missing, calls fail with -FI_ENOSYS and fi_strerror says why.
#include "providers/ofi/fabric_dl.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "base/runtime_lib.hpp"

namespace mpix {

RuntimeLib &fabric_runtime_lib() {
  static RuntimeLib lib("libfabric (provider ofi)", {"libfabric.so.1", "libfabric.so"});
  return lib;
}

}  // namespace mpix

namespace {

template <class Fn>
Fn resolve(const char *name) {
  return reinterpret_cast<Fn>(mpix::fabric_runtime_lib().sym(name));
}

}  // namespace

extern "C" {

uint32_t fi_version(void) {
  static const auto fn = resolve<uint32_t (*)(void)>("fi_version");
  return fn ? fn() : 0;
}

int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info) {
  static const auto fn = resolve<int (*)(uint32_t, const char *, const char *, uint64_t,
                                         const struct fi_info *, struct fi_info **)>("fi_getinfo");
  return fn ? fn(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

void fi_freeinfo(struct fi_info *info) {
  static const auto fn = resolve<void (*)(struct fi_info *)>("fi_freeinfo");
  if (fn) fn(info);
}

struct fi_info *fi_dupinfo(const struct fi_info *info) {
  static const auto fn = resolve<struct fi_info *(*)(const struct fi_info *)>("fi_dupinfo");
  return fn ? fn(info) : nullptr;
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context) {
  static const auto fn =
      resolve<int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *)>("fi_fabric");
  return fn ? fn(attr, fabric, context) : -FI_ENOSYS;
}

const char *fi_strerror(int errnum) {
  static const auto fn = resolve<const char *(*)(int)>("fi_strerror");
  if (fn) return fn(errnum);
  static const std::string why = mpix::fabric_runtime_lib().describe();
  return why.c_str();
}

}  // extern "C"
