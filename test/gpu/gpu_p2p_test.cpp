// The multi-rank enqueue suite on CUDA streams, run once per trigger mode (CTest sets
// MPIX_TRIGGER), each pattern with device, managed, pinned host and pageable host buffers:
// a ring, blocking calls, messages past the eager limit, 10,000 ops checked one by one (and
// Waitalls of 600 requests: several batches of stream memory operations; and of receives of
// one and several blocks each),
// wildcard receives, host completion of staged receives, allreduce, streams on every device.
#include <cuda.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

TEST_CASE("ring over CUDA streams, every buffer placement", "[gpu][p2p]") {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CudaStreamComm s;
  const int n = 1000;
  for (Place place : all_places()) {
    INFO("buffers: " << place_name(place) << ", trigger " << trigger_under_test());
    GpuBuf out(place, n * sizeof(int)), in(place, n * sizeof(int));
    for (int round = 0; round < 10; ++round) {
      std::vector<int> v(n);
      for (int i = 0; i < n; ++i) v[i] = round * 100000 + rank * 1000 + i;
      out.write(v);
      in.write(std::vector<int>(n, -1));
      MPI_Request r[2];
      REQUIRE(MPIX_Irecv_enqueue(in.get(), n, MPI_INT, prev, round, s.comm, &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(out.get(), n, MPI_INT, next, round, s.comm, &r[1]) == MPI_SUCCESS);
      MPI_Status st[2];
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      s.sync();
      auto got = in.read<int>(n);
      int bad = 0;
      for (int i = 0; i < n; ++i) bad += got[i] != round * 100000 + prev * 1000 + i;
      REQUIRE(bad == 0);
      CHECK(st[0].MPI_SOURCE == prev);
      CHECK(st[0].MPI_TAG == round);
    }
  }
}

TEST_CASE("blocking Send_enqueue / Recv_enqueue over CUDA streams", "[gpu][p2p]") {
  const int rank = world_rank(), size = world_size();
  if (size % 2) return;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CudaStreamComm s;
  for (Place place : all_places()) {
    INFO("buffers: " << place_name(place));
    GpuBuf tok(place, sizeof(int)), got(place, sizeof(int));
    tok.write(std::vector<int>{rank});
    got.write(std::vector<int>{-1});
    MPI_Status st;
    if (rank % 2 == 0) {
      REQUIRE(MPIX_Send_enqueue(tok.get(), 1, MPI_INT, next, 3, s.comm) == MPI_SUCCESS);
      REQUIRE(MPIX_Recv_enqueue(got.get(), 1, MPI_INT, prev, 3, s.comm, &st) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(got.get(), 1, MPI_INT, prev, 3, s.comm, &st) == MPI_SUCCESS);
      REQUIRE(MPIX_Send_enqueue(tok.get(), 1, MPI_INT, next, 3, s.comm) == MPI_SUCCESS);
    }
    s.sync();
    CHECK(got.read<int>(1)[0] == prev);
    CHECK(st.MPI_SOURCE == prev);
  }
}

TEST_CASE("large messages (rendezvous) in every placement arrive intact", "[gpu][p2p]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t bytes = 16u << 20;
  // Filled and checked on the host: a kernel may not touch pageable memory.
  std::vector<unsigned char> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = pattern_byte(100 + rank, i);
  for (Place place : all_places()) {
    INFO("buffers: " << place_name(place));
    GpuBuf out(place, bytes), in(place, bytes);
    out.write(v);
    in.write(std::vector<unsigned char>(bytes, 0));
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in.get(), (int)bytes, MPI_BYTE, peer, 1, s.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.get(), (int)bytes, MPI_BYTE, peer, 1, s.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    s.sync();
    auto got = in.read<unsigned char>(bytes);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < bytes; ++i) bad += got[i] != pattern_byte(100 + peer, i);
    CHECK(bad == 0);
  }
}

namespace {

// @p batches rounds of @p batch receives and sends on one CUDA stream, each round completed by
// one MPIX_Waitall_enqueue of its 2 x @p batch requests; every message checked at the end.
void ring_batches(int batch, int batches) {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CudaStreamComm s;
  for (Place place : {Place::device, Place::pinned}) {
    INFO("buffers: " << place_name(place));
    GpuBuf out(place, batch * sizeof(long)), in(place, batches * batch * sizeof(long));
    std::vector<MPI_Request> reqs(2 * batch);
    for (int b = 0; b < batches; ++b) {
      std::vector<long> v(batch);
      for (int i = 0; i < batch; ++i) v[i] = (long)rank * 1000000 + b * 1000 + i;
      // The stream may still be sending the previous batch out of `out`; wait before rewriting.
      s.sync();
      out.write(v);
      for (int i = 0; i < batch; ++i) {
        REQUIRE(MPIX_Irecv_enqueue(in.as<long>() + b * batch + i, 1, MPI_LONG, prev, i, s.comm,
                                   &reqs[i]) == MPI_SUCCESS);
        REQUIRE(MPIX_Isend_enqueue(out.as<long>() + i, 1, MPI_LONG, next, i, s.comm,
                                   &reqs[batch + i]) == MPI_SUCCESS);
      }
      REQUIRE(MPIX_Waitall_enqueue(2 * batch, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    }
    s.sync();
    auto got = in.read<long>(batches * batch);
    long errors = 0;
    for (int b = 0; b < batches; ++b)
      for (int i = 0; i < batch; ++i)
        errors += got[b * batch + i] != (long)prev * 1000000 + b * 1000 + i;
    CHECK(errors == 0);
  }
}

}  // namespace

TEST_CASE("10,000 enqueued ops per rank on a CUDA stream, every message checked",
          "[gpu][p2p][stress]") {
  ring_batches(100, 50);
}

// The driver takes fewer than 256 stream memory operations per batch: a Waitall of 600
// requests (deferred triggers: its waits and the trigger in batches) needs several
// (session 36: mpix_scale -d cuda with 1,000 in flight failed with CUDA_ERROR_INVALID_VALUE).
TEST_CASE("one MPIX_Waitall_enqueue of 600 requests on a CUDA stream", "[gpu][p2p][stress]") {
  ring_batches(300, 3);
}

// A Waitall's staged device receives go in one kernel, each on a block per 4 KiB (up to 16
// receives and 64 blocks a launch): 18 receives of 1 B to 64 KiB at odd offsets in one
// allocation, some longer than their message (the bytes past it must stay), three rounds.
TEST_CASE("one MPIX_Waitall_enqueue of device receives of one and of several blocks each",
          "[gpu][p2p]") {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CudaStreamComm s;
  const std::vector<int> sizes = {8,     4096, 4097,  8191, 20000, 65536, 3,     40000, 12288,
                                  65535, 1,    30000, 16,   50000, 4100,  65536, 7,     60000};
  const int n = static_cast<int>(sizes.size());
  std::vector<std::size_t> at(n + 1, 0);
  for (int i = 0; i < n; ++i) at[i + 1] = at[i] + sizes[i] + 1 + i % 5;  // odd offsets
  GpuBuf out(Place::device, at[n]), in(Place::device, at[n]);
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    std::vector<unsigned char> v(at[n]);
    for (std::size_t k = 0; k < at[n]; ++k) v[k] = pattern_byte(round * 10 + rank, k);
    s.sync();
    out.write(v);
    in.write(std::vector<unsigned char>(at[n], 0xEE));
    std::vector<MPI_Request> reqs(2 * n);
    std::vector<int> len(n);
    for (int i = 0; i < n; ++i) {
      len[i] = i % 3 == 0 ? sizes[i] - sizes[i] / 3 : sizes[i];  // every third: a shorter message
      REQUIRE(MPIX_Irecv_enqueue(in.as<unsigned char>() + at[i], sizes[i], MPI_BYTE, prev, i,
                                 s.comm, &reqs[i]) == MPI_SUCCESS);
    }
    for (int i = 0; i < n; ++i)
      REQUIRE(MPIX_Isend_enqueue(out.as<unsigned char>() + at[i], len[i], MPI_BYTE, next, i, s.comm,
                                 &reqs[n + i]) == MPI_SUCCESS);
    std::vector<MPI_Status> st(2 * n);
    REQUIRE(MPIX_Waitall_enqueue(2 * n, reqs.data(), st.data()) == MPI_SUCCESS);
    s.sync();
    auto got = in.read<unsigned char>(at[n]);
    for (int i = 0; i < n; ++i) {
      INFO("receive " << i << " of " << sizes[i] << " bytes, message " << len[i]);
      std::size_t bad = 0, kept = 0;
      for (int k = 0; k < len[i]; ++k)
        bad += got[at[i] + k] != pattern_byte(round * 10 + prev, at[i] + k);
      for (std::size_t k = at[i] + len[i]; k < at[i + 1]; ++k) kept += got[k] == 0xEE;
      CHECK(bad == 0);
      CHECK(kept == at[i + 1] - at[i] - len[i]);
      int count = -1;
      MPI_Get_count(&st[i], MPI_BYTE, &count);
      CHECK(count == len[i]);
    }
  }
}

TEST_CASE("ANY_SOURCE / ANY_TAG receives into device memory; status names the sender",
          "[gpu][matching]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  GpuBuf buf(Place::device, size * sizeof(int));
  if (rank == 0) {
    std::vector<MPI_Status> st(size);
    for (int i = 1; i < size; ++i)
      REQUIRE(MPIX_Recv_enqueue(buf.as<int>() + i, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, s.comm,
                                &st[i]) == MPI_SUCCESS);
    s.sync();
    auto got = buf.read<int>(size);
    std::vector<int> seen(size, 0);
    for (int i = 1; i < size; ++i) {
      CHECK(st[i].MPI_TAG == 40 + st[i].MPI_SOURCE);
      CHECK(got[i] == st[i].MPI_SOURCE * 11);
      seen[st[i].MPI_SOURCE]++;
    }
    for (int r = 1; r < size; ++r) CHECK(seen[r] == 1);
  } else {
    buf.write(std::vector<int>(size, rank * 11));
    REQUIRE(MPIX_Send_enqueue(buf.get(), 1, MPI_INT, 0, 40 + rank, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("a staged device receive completed by host MPI_Wait / MPI_Test has its data",
          "[gpu][status]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const int n = 4096;
  for (Place place : {Place::device, Place::managed}) {
    INFO("buffers: " << place_name(place));
    GpuBuf in(place, n * sizeof(int)), out(place, n * sizeof(int));
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), rank * 7);
    out.write(v);
    in.write(std::vector<int>(n, -1));
    MPI_Request r, sr;
    REQUIRE(MPIX_Irecv_enqueue(in.get(), n, MPI_INT, peer, 5, s.comm, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.get(), n, MPI_INT, peer, 5, s.comm, &sr) == MPI_SUCCESS);
    MPI_Status st;
    if (rank % 2) {
      REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
    } else {
      int flag = 0;
      while (!flag) REQUIRE(MPI_Test(&r, &flag, &st) == MPI_SUCCESS);
    }
    CHECK(r == MPI_REQUEST_NULL);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n);
    CHECK(st.MPI_SOURCE == peer);
    // No stream wait was enqueued for the receive: the data must be there already.
    auto got = in.read<int>(n);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += got[i] != peer * 7 + i;
    CHECK(bad == 0);
    REQUIRE(MPI_Wait(&sr, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("Allreduce_enqueue on device buffers, in place and not", "[gpu][allreduce]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  const int n = 1000;
  for (Place place : {Place::device, Place::managed, Place::pinned}) {
    INFO("buffers: " << place_name(place));
    GpuBuf a(place, n * sizeof(int)), b(place, n * sizeof(int));
    std::vector<int> v(n);
    for (int i = 0; i < n; ++i) v[i] = rank + i;
    a.write(v);
    REQUIRE(MPIX_Allreduce_enqueue(a.get(), b.get(), n, MPI_INT, MPI_SUM, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(MPI_IN_PLACE, a.get(), n, MPI_INT, MPI_SUM, s.comm) ==
            MPI_SUCCESS);
    s.sync();
    auto rb = b.read<int>(n), ra = a.read<int>(n);
    const int ranks_sum = size * (size - 1) / 2;
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += rb[i] != ranks_sum + size * i || ra[i] != rb[i];
    CHECK(bad == 0);
  }
}

TEST_CASE("streams on every device of the process carry traffic", "[gpu][devices]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  int ndev = 0, home = 0;
  CUDA_REQUIRE(cudaGetDeviceCount(&ndev));
  CUDA_REQUIRE(cudaGetDevice(&home));
  int most = 0;
  MPI_Allreduce(&ndev, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (int d = 0; d < most; ++d) {
    int dev = d % ndev;
    INFO("device " << dev << " (this rank's own device is " << home << ")");
    CUDA_REQUIRE(cudaSetDevice(dev));
    cudaStream_t cs;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    auto out = std::make_unique<GpuBuf>(Place::device, 4096);
    auto in = std::make_unique<GpuBuf>(Place::device, 4096);
    CUDA_REQUIRE(fill_pattern(out->get(), 4096, 7 * rank + d, cs));
    // Enqueue with another device current: mpix must switch to the stream's device itself.
    CUDA_REQUIRE(cudaSetDevice(home));
    MPIX_Stream ms;
    REQUIRE(CudaStreamComm::make_stream(cs, nullptr, &ms) == MPI_SUCCESS);
    MPI_Comm comm;
    REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm) == MPI_SUCCESS);
    MPI_Request r[2];
    REQUIRE(MPIX_Irecv_enqueue(in->get(), 4096, MPI_BYTE, peer, d, comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out->get(), 4096, MPI_BYTE, peer, d, comm, &r[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_synchronize(ms) == MPI_SUCCESS);
    auto got = in->read<unsigned char>(4096);
    int bad = 0;
    for (std::size_t i = 0; i < 4096; ++i) bad += got[i] != pattern_byte(7 * peer + d, i);
    CHECK(bad == 0);
    int cur = -1;
    CUDA_REQUIRE(cudaGetDevice(&cur));
    CHECK(cur == home);
    REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_free(&ms) == MPI_SUCCESS);
    CUDA_REQUIRE(cudaSetDevice(dev));
    out.reset();
    in.reset();
    CUDA_REQUIRE(cudaStreamDestroy(cs));
    CUDA_REQUIRE(cudaSetDevice(home));
  }
}

TEST_CASE("mpix_trigger info key: each mode carries traffic, a bad one is refused",
          "[gpu][trigger]") {
  const int rank = world_rank(), size = world_size();
  cudaStream_t cs;
  CUDA_REQUIRE(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  MPIX_Stream bad = MPIX_STREAM_NULL;
  int rc = CudaStreamComm::make_stream(cs, "telepathy", &bad);
  CHECK(error_class(rc) == MPI_ERR_ARG);
  CHECK(bad == MPIX_STREAM_NULL);
  CUDA_REQUIRE(cudaStreamDestroy(cs));
  if (rank >= size - size % 2) return;
  for (const char *mode : {"memop", "hostfn", "kernel"}) {
    INFO("mpix_trigger=" << mode);
    CudaStreamComm s(mode);
    GpuBuf out(Place::device, 256), in(Place::device, 256);
    CUDA_REQUIRE(fill_pattern(out.get(), 256, rank, s.cs));
    REQUIRE(MPIX_Send_enqueue(out.get(), 256, MPI_BYTE, rank ^ 1, 9, s.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Recv_enqueue(in.get(), 256, MPI_BYTE, rank ^ 1, 9, s.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    s.sync();
    auto got = in.read<unsigned char>(256);
    int errs = 0;
    for (std::size_t i = 0; i < 256; ++i) errs += got[i] != pattern_byte(rank ^ 1, i);
    CHECK(errs == 0);
  }
}

TEST_CASE("ops enqueued while the stream is captured run when the graph is launched",
          "[gpu][graph]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  // CUDA cannot capture the legacy default stream (cudaErrorStreamCaptureUnsupported).
  if (stream_kind_under_test() == StreamKindUnderTest::legacy) return;
  CudaStreamComm s;
  GpuBuf out(Place::pinned, 64 * sizeof(int)), in(Place::pinned, 64 * sizeof(int));
  std::vector<int> v(64, rank + 500);
  out.write(v);
  in.write(std::vector<int>(64, -1));
  // Relaxed: mpix makes runtime calls (pointer queries) that global capture mode forbids.
  CUDA_REQUIRE(cudaStreamBeginCapture(s.cs, cudaStreamCaptureModeRelaxed));
  int rc1 = rank % 2 == 0
                ? MPIX_Send_enqueue(out.get(), 64, MPI_INT, peer, 2, s.comm)
                : MPIX_Recv_enqueue(in.get(), 64, MPI_INT, peer, 2, s.comm, MPI_STATUS_IGNORE);
  int rc2 = rank % 2 == 0
                ? MPIX_Recv_enqueue(in.get(), 64, MPI_INT, peer, 3, s.comm, MPI_STATUS_IGNORE)
                : MPIX_Send_enqueue(out.get(), 64, MPI_INT, peer, 3, s.comm);
  cudaGraph_t g;
  CUDA_REQUIRE(cudaStreamEndCapture(s.cs, &g));
  REQUIRE(rc1 == MPI_SUCCESS);
  REQUIRE(rc2 == MPI_SUCCESS);
  CHECK(in.read<int>(64)[0] == -1);  // nothing ran during capture
  cudaGraphExec_t ge;
  CUDA_REQUIRE(cudaGraphInstantiate(&ge, g, 0));
  CUDA_REQUIRE(cudaGraphLaunch(ge, s.cs));
  s.sync();
  auto got = in.read<int>(64);
  CHECK(got[0] == peer + 500);
  CHECK(got[63] == peer + 500);
  CUDA_REQUIRE(cudaGraphExecDestroy(ge));
  CUDA_REQUIRE(cudaGraphDestroy(g));
}

TEST_CASE("a staged device receive longer than its message keeps the bytes past the message",
          "[gpu][p2p][short]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t cap = 3u << 20;
  const unsigned char sentinel = 0xA5;
  for (Place place : {Place::device, Place::managed}) {
    GpuBuf out(place, cap), in(place, cap);
    for (std::size_t m : {std::size_t{1}, std::size_t{4095}, std::size_t{65537},
                          std::size_t{(2u << 20) + 3}, cap - 1}) {
      for (bool host_wait : {false, true}) {
        INFO(m << "-byte message into a " << cap << "-byte " << place_name(place)
               << " receive, completed by " << (host_wait ? "MPI_Wait" : "the stream")
               << ", trigger " << trigger_under_test());
        std::vector<unsigned char> v(m);
        for (std::size_t i = 0; i < m; ++i) v[i] = pattern_byte(static_cast<uint32_t>(rank + m), i);
        out.write(v);
        in.write(std::vector<unsigned char>(cap, sentinel));
        MPI_Request r[2];
        MPI_Status st[2];
        REQUIRE(MPIX_Irecv_enqueue(in.get(), static_cast<int>(cap), MPI_BYTE, peer, 6, s.comm,
                                   &r[0]) == MPI_SUCCESS);
        REQUIRE(MPIX_Isend_enqueue(out.get(), static_cast<int>(m), MPI_BYTE, peer, 6, s.comm,
                                   &r[1]) == MPI_SUCCESS);
        if (host_wait) {
          REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
        } else {
          REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
        }
        s.sync();
        int count = -1;
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        CHECK(count == static_cast<int>(m));
        auto got = in.read<unsigned char>(cap);
        std::size_t bad = 0, clobbered = 0;
        for (std::size_t i = 0; i < m; ++i)
          bad += got[i] != pattern_byte(static_cast<uint32_t>(peer + m), i);
        for (std::size_t i = m; i < cap; ++i) clobbered += got[i] != sentinel;
        CHECK(bad == 0);
        CHECK(clobbered == 0);
      }
    }
  }
}

// Bad input (issue 13): a stream of a CUDA context other than its device's primary one (mpix's
// copies and kernels run in the primary context) is refused at MPIX_Stream_create with
// MPI_ERR_ARG (the log line names the call and the argument); no stream is made. The driver calls
// are resolved at run time (the tests do not link libcuda).
TEST_CASE("a stream of a non-primary CUDA context is refused with MPI_ERR_ARG", "[gpu][bad]") {
  using CtxCreate = CUresult (*)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
  using CtxDestroy = CUresult (*)(CUcontext);
  using CtxPop = CUresult (*)(CUcontext *);
  using StreamCreate = CUresult (*)(CUstream *, unsigned);
  using StreamDestroy = CUresult (*)(CUstream);
  auto resolve = [](const char *name, int version) -> void * {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return nullptr;
    return p;
  };
  auto create = reinterpret_cast<CtxCreate>(resolve("cuCtxCreate", 12050));
  auto destroy = reinterpret_cast<CtxDestroy>(resolve("cuCtxDestroy", 12000));
  auto pop = reinterpret_cast<CtxPop>(resolve("cuCtxPopCurrent", 12000));
  auto screate = reinterpret_cast<StreamCreate>(resolve("cuStreamCreate", 12000));
  auto sdestroy = reinterpret_cast<StreamDestroy>(resolve("cuStreamDestroy", 12000));
  if (!create || !destroy || !pop || !screate || !sdestroy) {
    WARN("driver lacks cuCtxCreate (12.5 form) or friends: not tested");
    return;
  }
  int dev = 0;
  CUDA_REQUIRE(cudaGetDevice(&dev));
  CUcontext ctx = nullptr;
  if (create(&ctx, nullptr, 0, static_cast<CUdevice>(dev)) != CUDA_SUCCESS) {  // now current
    WARN("cuCtxCreate failed here (MPS may not allow another context): not tested");
    return;
  }
  CUstream foreign = nullptr;
  const CUresult sc = screate(&foreign, CU_STREAM_NON_BLOCKING);
  CUcontext popped = nullptr;
  pop(&popped);  // the primary context is current again
  if (sc != CUDA_SUCCESS) {
    destroy(ctx);
    WARN("cuStreamCreate in a second context failed: not tested");
    return;
  }
  MPIX_Stream ms = MPIX_STREAM_NULL;
  const int rc = CudaStreamComm::make_stream(reinterpret_cast<cudaStream_t>(foreign), nullptr, &ms);
  CHECK(error_class(rc) == MPI_ERR_ARG);
  CHECK(ms == MPIX_STREAM_NULL);
  // The message naming the call and the argument goes to mpix's log (warn level):
  //   "MPIX_Stream_create: info "value": cudaStream_t ... belongs to a CUDA context other ..."
  sdestroy(foreign);
  destroy(ctx);
}
