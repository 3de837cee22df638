// Which sends go GPU-direct (providers/mpi/ipc_path.hpp: ipc_send_read, ipc_send_goes_direct),
// without a device: a fake backend whose "device memory" is an arena of this process. A
// partition of a partitioned send (a gated op: a gate word, no stream) goes GPU-direct at every
// size to a GPU-direct peer; a stream-less op without a gate never does; a gated op over an
// allocation that replaced one exported before is staged (its device copy would need a stream).
// Needs MPI (datatype sizes): one rank.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "catch.hpp"
#include "core/op.hpp"
#include "gpu/backend.hpp"
#include "gpu/ipc_exports.hpp"
#include "providers/mpi/ipc_path.hpp"

using namespace mpix;

namespace {

// "Device memory": the arena, one allocation of 4096 bytes whose buffer id the test sets.
class FakeDeviceBackend : public Backend {
 public:
  StreamKind kind() const override { return StreamKind::cuda; }
  const char *name() const override { return "fake-device"; }
  Status open_stream(void *, TriggerMode, std::unique_ptr<ExecStream> *) override {
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION, "no streams");
  }
  MemKind classify(const void *p) const override {
    return in_arena(p) ? MemKind::device : MemKind::host;
  }
  Status alloc_pinned(std::size_t, void **) override { return make_status(MPI_ERR_NO_MEM, "none"); }
  void free_pinned(void *) override {}
  std::string describe() const override { return "fake-device"; }
  Status ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id) override {
    if (!in_arena(p)) return make_status(MPI_ERR_ARG, "not device memory");
    *base = reinterpret_cast<uint64_t>(arena);
    *size = sizeof arena;
    *buffer_id = id;
    return {};
  }
  Status ipc_handle(uint64_t, unsigned char (&handle)[64]) override {
    std::memset(handle, static_cast<int>(id), sizeof handle);
    return {};
  }
  bool in_arena(const void *p) const {
    const auto *c = static_cast<const char *>(p);
    return c >= arena && c < arena + sizeof arena;
  }
  alignas(64) char arena[4096] = {};
  uint64_t id = 1;
};

const uint64_t kGate = 0;

// A send of @p bytes at @p buf to rank 1, gated (a partition) or not.
void make_send(Op &op, const void *buf, int bytes, bool gated) {
  op.kind = OpKind::send;
  op.sbuf = buf;
  op.count = bytes;
  op.dt = MPI_BYTE;
  op.peer = 1;
  op.tag = 0;
  op.gate = gated ? &kGate : nullptr;
}

}  // namespace

TEST_CASE("GPU-direct selection: partitions of device memory go direct at every size", "[ipc]") {
  FakeDeviceBackend be;
  IpcShared ipc;
  ipc.backend = &be;
  ipc.device = 0;
  ipc.direct = {0, 1, 0};  // rank 1 is a GPU-direct peer, rank 2 is not
  Op op;
  for (int bytes : {1, 8, 4096}) {
    CAPTURE(bytes);
    make_send(op, be.arena, bytes, true);
    CHECK(ipc_send_read(op, &ipc) == DeviceRead::as_is);
    CHECK(ipc_send_goes_direct(op, &ipc));
  }
  // Offsets into the allocation too.
  make_send(op, be.arena + 100, 8, true);
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::as_is);
  // Not a partition (no gate, no stream): never.
  make_send(op, be.arena, 4096, false);
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);
  CHECK_FALSE(ipc_send_goes_direct(op, &ipc));
  // A peer without the path, no bytes, a datatype held as a duplicate: staged.
  make_send(op, be.arena, 64, true);
  op.peer = 2;
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);
  make_send(op, be.arena, 0, true);
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);
  make_send(op, be.arena, 64, true);
  op.dt_owned = true;
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);
  // Host memory: not read by the path.
  char host[64];
  make_send(op, host, 64, true);
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);
  CHECK_FALSE(ipc_send_goes_direct(op, &ipc));
}

TEST_CASE("GPU-direct selection: a partition over a re-made exported allocation is staged",
          "[ipc]") {
  FakeDeviceBackend be;
  be.id = 7001;  // ids of this test only: the export registry is the process's
  IpcShared ipc;
  ipc.backend = &be;
  ipc.direct = {0, 1};
  unsigned char h[64];
  const auto base = reinterpret_cast<uint64_t>(be.arena);
  REQUIRE(ipc_exports().handle(base, sizeof be.arena, be.id, &be, h).is_ok());
  Op op;
  make_send(op, be.arena, 256, true);
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::as_is);  // the exported allocation itself
  be.id = 7002;                                         // freed and made again at the same address
  CHECK(ipc_send_read(op, &ipc) == DeviceRead::no);     // no stream for a device copy
  // A stream op would take the device copy; a partition is staged through the host.
}
