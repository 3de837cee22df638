// An MPI+CUDA program as such codes are written (issue 13 item 2): its CUDA stream made with
// plain cudaStreamCreate (a blocking stream: ordered with the legacy default stream) before
// MPI_Init, then MPIX_Allreduce_enqueue on device buffers, several queued back to back with
// growing sizes (new bounce buffers are allocated while the stream waits for the previous
// ones), each result checked by a kernel on the stream and by the host at the end. Then two
// blocking streams with a dependency across them (one receives while the other sends), and the
// legacy default stream and the per-thread default stream as MPIX streams.
// Own main: the stream must exist before MPI_Init. No CUDA_MODULE_LOADING from CTest: runs as a
// user would start it. Exits 77 (skipped) without a usable device.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mpix/mpix.h"
#include "test_kernels.hpp"
#include "watchdog.hpp"

using namespace mpix_gpu_test;

namespace {

int g_rank = -1, g_failures = 0;

#define EXPECT(cond, ...)                                                                      \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "rank %d: FAILED %s (%s:%d): ", g_rank, #cond, __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                                                       \
      std::fprintf(stderr, "\n");                                                              \
      ++g_failures;                                                                            \
    }                                                                                          \
  } while (0)
#define CUDA_OK(expr)                                                                           \
  do {                                                                                          \
    cudaError_t rc_ = (expr);                                                                   \
    if (rc_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "rank %d: %s failed: %s\n", g_rank, #expr, cudaGetErrorString(rc_)); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                             \
    }                                                                                           \
  } while (0)
#define MPI_OK(expr)                                                         \
  do {                                                                       \
    int rc_ = (expr);                                                        \
    if (rc_ != MPI_SUCCESS) {                                                \
      char msg_[MPI_MAX_ERROR_STRING];                                       \
      int len_ = 0;                                                          \
      MPI_Error_string(rc_, msg_, &len_);                                    \
      std::fprintf(stderr, "rank %d: %s failed: %s\n", g_rank, #expr, msg_); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                          \
    }                                                                        \
  } while (0)

int local_rank_from_env() {
  for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *s = std::getenv(v)) return std::atoi(s);
  return 0;
}

void make_stream_comm(cudaStream_t cs, MPIX_Stream *stream, MPI_Comm *comm) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "cudaStream_t");
  MPI_OK(MPIX_Info_set_hex(info, "value", &cs, sizeof cs));
  MPI_OK(MPIX_Stream_create(info, stream));
  MPI_Info_free(&info);
  MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, *stream, comm));
}

void free_stream_comm(MPIX_Stream *stream, MPI_Comm *comm) {
  MPI_OK(MPIX_Stream_synchronize(*stream));
  MPI_OK(MPI_Comm_free(comm));
  MPI_OK(MPIX_Stream_free(stream));
}

// Allreduces of growing sizes queued back to back on @p cs, each checked on the stream.
void allreduces(cudaStream_t cs, const char *what) {
  const int size = [] {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
  }();
  MPIX_Stream stream;
  MPI_Comm comm;
  make_stream_comm(cs, &stream, &comm);
  unsigned long long *counters = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&counters), 2 * sizeof(unsigned long long)));
  CUDA_OK(cudaMemset(counters, 0, 2 * sizeof(unsigned long long)));
  std::vector<int *> ins, outs;
  std::vector<int> counts;
  for (int n = 16; n <= (1 << 20); n *= 4) {
    int *in = nullptr, *out = nullptr;
    CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&in), n * sizeof(int)));
    CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&out), n * sizeof(int)));
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[i] = g_rank + i;
    CUDA_OK(cudaMemcpy(in, v.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(out, 0xff, n * sizeof(int)));
    ins.push_back(in);
    outs.push_back(out);
    counts.push_back(n);
  }
  CUDA_OK(cudaDeviceSynchronize());  // the setup copies, before anything waits
  watchdog_stage(what);
  for (std::size_t k = 0; k < counts.size(); ++k) {
    MPI_OK(MPIX_Allreduce_enqueue(ins[k], outs[k], counts[k], MPI_INT, MPI_SUM, comm));
    CUDA_OK(check_ints(outs[k], static_cast<std::size_t>(counts[k]), size * (size - 1) / 2, size,
                       counters, counters + 1, cs));
  }
  MPI_OK(MPIX_Stream_synchronize(stream));
  unsigned long long res[2] = {1, 0};
  CUDA_OK(cudaMemcpy(res, counters, sizeof res, cudaMemcpyDeviceToHost));
  EXPECT(res[0] == 0, "%s: %llu ints wrong", what, res[0]);
  EXPECT(res[1] == counts.size(), "%s: %llu of %zu checks ran", what, res[1], counts.size());
  std::vector<int> last(static_cast<std::size_t>(counts.back()));
  CUDA_OK(cudaMemcpy(last.data(), outs.back(), last.size() * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (std::size_t i = 0; i < last.size(); ++i)
    bad += last[i] != size * (size - 1) / 2 + size * static_cast<int>(i);
  EXPECT(bad == 0, "%s: host sees %d wrong ints in the last result", what, bad);
  for (std::size_t k = 0; k < counts.size(); ++k) {
    cudaFree(ins[k]);
    cudaFree(outs[k]);
  }
  cudaFree(counters);
  free_stream_comm(&stream, &comm);
}

// Two blocking streams: A receives from the peer while B sends to it. Blocking streams are not
// ordered with each other, only with the legacy stream: anything mpix did on (or behind) the
// legacy stream between them would make B's send wait for A's receive, on both ranks.
void cross_streams() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (g_rank >= size - size % 2) return;
  const int peer = g_rank ^ 1;
  cudaStream_t a, b;
  CUDA_OK(cudaStreamCreate(&a));
  CUDA_OK(cudaStreamCreate(&b));
  MPIX_Stream sa, sb;
  MPI_Comm ca, cb;
  make_stream_comm(a, &sa, &ca);
  make_stream_comm(b, &sb, &cb);
  for (int n : {8, 3000, 200000}) {  // a new bounce buffer size each time
    int *in = nullptr, *out = nullptr;
    CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&in), n * sizeof(int)));
    CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&out), n * sizeof(int)));
    std::vector<int> v(static_cast<std::size_t>(n), 1000 + g_rank);
    CUDA_OK(cudaMemcpy(out, v.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(in, 0, n * sizeof(int)));
    CUDA_OK(cudaDeviceSynchronize());
    watchdog_stage("two blocking streams: A receives, then B sends");
    // Each rank first blocks one stream in a receive, then sends on its other stream; the
    // messages cross: even ranks receive on (A, ca) and send on (B, cb), odd ranks the other
    // way round, so each send matches the peer's receive on the same communicator.
    const bool even = g_rank % 2 == 0;
    MPI_OK(MPIX_Recv_enqueue(in, n, MPI_INT, peer, 3, even ? ca : cb, MPI_STATUS_IGNORE));
    MPI_OK(MPIX_Send_enqueue(out, n, MPI_INT, peer, 3, even ? cb : ca));
    MPI_OK(MPIX_Stream_synchronize(sb));
    MPI_OK(MPIX_Stream_synchronize(sa));
    std::vector<int> got(static_cast<std::size_t>(n));
    CUDA_OK(cudaMemcpy(got.data(), in, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int x : got) bad += x != 1000 + peer;
    EXPECT(bad == 0, "two blocking streams, %d ints: %d wrong", n, bad);
    cudaFree(in);
    cudaFree(out);
  }
  free_stream_comm(&sa, &ca);
  free_stream_comm(&sb, &cb);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

}  // namespace

int main(int argc, char **argv) {
  int ndev = 0;
  const cudaError_t dev_rc = cudaGetDeviceCount(&ndev);
  cudaStream_t user = nullptr;
  if (dev_rc == cudaSuccess && ndev > 0) {
    cudaSetDevice(local_rank_from_env() % ndev);
    cudaStreamCreate(&user);  // before MPI_Init, blocking, as most codes make theirs
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int have = user ? 1 : 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (!have)
      std::printf("SKIP: rank %d has no usable CUDA device (%s)\n", g_rank,
                  dev_rc != cudaSuccess ? cudaGetErrorString(dev_rc) : "none found");
    MPI_Finalize();
    return 77;
  }
  if (provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Watchdog dog(Watchdog::seconds_from_env("MPIX_TEST_WATCHDOG_S", 240), g_rank);
  allreduces(user, "allreduces on a cudaStreamCreate stream made before MPI_Init");
  cross_streams();
  allreduces(cudaStreamLegacy, "allreduces on the legacy default stream (cudaStreamLegacy)");
  allreduces(nullptr, "allreduces on stream 0");
  allreduces(cudaStreamPerThread, "allreduces on cudaStreamPerThread");
  watchdog_stage("finishing");
  cudaStreamDestroy(user);
  int worst = 0;
  MPI_Allreduce(&g_failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dog.disarm();
  if (g_rank == 0) std::printf("%s\n", worst ? "FAILED" : "passed");
  MPI_Finalize();
  return worst ? 1 : 0;
}
