// Probe, not built by CMake (scripts/device_pairs.sh builds and runs it; nvcc -O2 -arch=sm_90
// -ccbin mpicxx -DOMPI_SKIP_MPICXX bench/cuda/probe_pairs.cu -o probe_pairs -lcuda): why do
// several rank pairs on one GPU slow stream-triggered MPI down? N ranks, pairs (0, 1), (2, 3),
// ..., 8 B ping-pong, each iteration a 1-thread kernel writes the message before it is sent;
// one-way us per pair (half the round trip), mean and slowest pair. Modes:
//   gpu-memop  kernel, cuStreamWriteValue64 to a pinned host word; a relay thread (like mpix's
//              agent) sees it and MPI_Isends; the peer's relay MPI_Irecvs and writes the peer's
//              pinned "arrived" word, which the peer stream cuStreamWaitValue64s on. Every
//              iteration is enqueued up front, then the main thread cudaStreamSynchronizes.
//   gpu-spin   the same with 1-thread store / spin kernels instead of the memory operations.
//   host-sync  kernel, cudaStreamSynchronize, MPI_Send / MPI_Recv (no relay thread).
//   gpu-only   no host at all: the kernel writes the message into the peer's device buffer
//              (CUDA IPC), cuStreamWriteValue64 to the peer's IPC-mapped device flag; the
//              stream waits on its own device flag.
// Also per rank: CPU time of the process / wall time (busy threads) and involuntary context
// switches per iteration (oversubscribed cores), averaged over the ranks.
// Usage: mpirun -np N probe_pairs [--modes m1,m2,..] [-i ITERS] [-x WARMUP]
//          [--host-wait auto|spin|yield|block] [--relay spin|pause|yield]
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)
#define CU(x)                                                             \
  do {                                                                    \
    CUresult r_ = (x);                                                    \
    if (r_ != CUDA_SUCCESS) {                                             \
      const char *s_ = "?";                                               \
      cuGetErrorString(r_, &s_);                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                       \
    }                                                                     \
  } while (0)
#define MK(x)                                                                     \
  do {                                                                            \
    int m_ = (x);                                                                 \
    if (m_ != MPI_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d %s failed (%d)\n", __FILE__, __LINE__, #x, m_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                               \
    }                                                                             \
  } while (0)

__global__ void write_msg(uint64_t *msg, uint64_t v) { *msg = v; }
__global__ void store_sys(uint64_t *w, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
}
__global__ void spin_sys(const uint64_t *w, uint64_t v) {
  uint64_t x;
  do asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(x) : "l"(w) : "memory");
  while (x < v);
}

namespace {

struct Cfg {
  std::vector<std::string> modes{"gpu-memop", "gpu-spin", "host-sync", "gpu-only"};
  int iters = 2000, warmup = 200;
  std::string host_wait = "auto", relay = "spin";
};

int rank_, nranks_, peer_;
cudaStream_t s_;
// Pinned, mapped; each word on its own 128 B: trigger (GPU -> relay), arrived (relay -> GPU),
// message sent, message received.
constexpr int kTrig = 0, kArrived = 16, kSent = 32, kRecvd = 48;
uint64_t *h_words_, *d_words_;    // host and device addresses
CUdeviceptr d_trig_, d_arrived_;  // device addresses of the trigger and arrived words
uint64_t *d_own_ = nullptr, *d_peer_ = nullptr;  // gpu-only: [0] flag, [1] message

inline void relax(const std::string &how) {
  if (how == "pause") __builtin_ia32_pause();
  else if (how == "yield") sched_yield();
}

// The relay thread of gpu-memop / gpu-spin: sends message k once the trigger word reaches k,
// receives message k and then writes k to the arrived word; `total` messages each way.
void relay(int total, const std::string &how) {
  volatile uint64_t *trig = h_words_ + kTrig, *arrived = h_words_ + kArrived;
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // [0] recv, [1] send
  int sent = 0, recvd = 0, sends_done = 0;
  MK(MPI_Irecv(h_words_ + kRecvd, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD, &req[0]));
  while (recvd < total || sends_done < total) {
    if (req[1] == MPI_REQUEST_NULL && sent < total && *trig >= uint64_t(sent + 1)) {
      MK(MPI_Isend(h_words_ + kSent, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD, &req[1]));
      ++sent;
    }
    int n = 0, idx[2];
    MK(MPI_Testsome(2, req, &n, idx, MPI_STATUSES_IGNORE));
    if (n == MPI_UNDEFINED) n = 0;
    for (int k = 0; k < n; ++k) {
      if (idx[k] == 1) {
        ++sends_done;
        continue;
      }
      ++recvd;
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *arrived = uint64_t(recvd);
      if (recvd < total)
        MK(MPI_Irecv(h_words_ + kRecvd, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD, &req[0]));
    }
    if (n == 0) relax(how);
  }
}

// Enqueues iterations [from, to) of a stream-triggered mode on s_.
void enqueue(const std::string &mode, int from, int to) {
  const bool first = rank_ % 2 == 0;
  for (int i = from; i < to; ++i) {
    const uint64_t k = uint64_t(i) + 1;
    auto wait = [&] {
      if (mode == "gpu-memop") CU(cuStreamWaitValue64(s_, d_arrived_, k, CU_STREAM_WAIT_VALUE_GEQ));
      else if (mode == "gpu-spin") spin_sys<<<1, 1, 0, s_>>>(d_words_ + kArrived, k);
      else CU(cuStreamWaitValue64(s_, CUdeviceptr(d_own_), k, CU_STREAM_WAIT_VALUE_GEQ));
      CK(cudaGetLastError());
    };
    auto compute_and_send = [&] {
      if (mode == "gpu-only") {
        write_msg<<<1, 1, 0, s_>>>(d_peer_ + 1, k);
        CK(cudaGetLastError());
        CU(cuStreamWriteValue64(s_, CUdeviceptr(d_peer_), k, CU_STREAM_WRITE_VALUE_DEFAULT));
        return;
      }
      write_msg<<<1, 1, 0, s_>>>(d_words_ + kSent, k);  // the message, pinned host
      CK(cudaGetLastError());
      if (mode == "gpu-memop")
        CU(cuStreamWriteValue64(s_, d_trig_, k, CU_STREAM_WRITE_VALUE_DEFAULT));
      else store_sys<<<1, 1, 0, s_>>>(d_words_ + kTrig, k);
      CK(cudaGetLastError());
    };
    if (first) {
      compute_and_send();
      wait();
    } else {
      wait();
      compute_and_send();
    }
  }
}

void host_sync_iters(int n) {
  for (int i = 0; i < n; ++i) {
    const bool first = rank_ % 2 == 0;
    if (!first)
      MK(MPI_Recv(h_words_ + kRecvd, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    write_msg<<<1, 1, 0, s_>>>(d_words_ + kSent, uint64_t(i) + 1);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s_));
    MK(MPI_Send(h_words_ + kSent, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD));
    if (first)
      MK(MPI_Recv(h_words_ + kRecvd, 1, MPI_UINT64_T, peer_, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
}

double cpu_s(long *nivcsw) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  *nivcsw = u.ru_nivcsw;
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// gpu-only: each rank of a pair maps the other's device words (made on first use, so that a
// failure here comes after the other modes' results).
void map_peer() {
  CK(cudaMalloc(&d_own_, 4096));
  CK(cudaMemset(d_own_, 0, 4096));
  cudaIpcMemHandle_t mine, theirs;
  CK(cudaIpcGetMemHandle(&mine, d_own_));
  MK(MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, peer_, 3, &theirs, sizeof theirs, MPI_BYTE, peer_,
                  3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  void *p = nullptr;
  CK(cudaIpcOpenMemHandle(&p, theirs, cudaIpcMemLazyEnablePeerAccess));
  d_peer_ = static_cast<uint64_t *>(p);
}

void run_mode(const Cfg &c, const std::string &mode) {
  const bool stream = mode != "host-sync";
  const bool relayed = mode == "gpu-memop" || mode == "gpu-spin";
  if (mode == "gpu-only" && !d_own_) map_peer();
  h_words_[kTrig] = h_words_[kArrived] = 0;
  if (d_own_) CK(cudaMemset(d_own_, 0, 2 * sizeof(uint64_t)));
  CK(cudaDeviceSynchronize());
  MK(MPI_Barrier(MPI_COMM_WORLD));
  std::thread rt;
  if (relayed) rt = std::thread(relay, c.warmup + c.iters, c.relay);
  // Warm-up, then the timed iterations.
  if (stream) {
    enqueue(mode, 0, c.warmup);
    CK(cudaStreamSynchronize(s_));
  } else {
    host_sync_iters(c.warmup);
  }
  MK(MPI_Barrier(MPI_COMM_WORLD));
  long csw0, csw1;
  const double cpu0 = cpu_s(&csw0), t0 = MPI_Wtime();
  if (stream) {
    enqueue(mode, c.warmup, c.warmup + c.iters);
    CK(cudaStreamSynchronize(s_));
  } else {
    host_sync_iters(c.iters);
  }
  const double t1 = MPI_Wtime(), cpu1 = cpu_s(&csw1);
  if (relayed) rt.join();
  double mine[3] = {(t1 - t0) * 1e6 / (2.0 * c.iters), (cpu1 - cpu0) / (t1 - t0),
                    double(csw1 - csw0) / c.iters};
  std::vector<double> all(3 * nranks_);
  MK(MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  if (rank_ != 0) return;
  double sum = 0, mx = 0, cpu = 0, csw = 0;
  std::string per_pair;
  for (int p = 0; p < nranks_ / 2; ++p) {
    const double us = std::max(all[6 * p], all[6 * p + 3]);
    sum += us;
    mx = std::max(mx, us);
    char b[32];
    std::snprintf(b, sizeof b, " %.2f", us);
    per_pair += b;
  }
  for (int r = 0; r < nranks_; ++r) {
    cpu += all[3 * r + 1] / nranks_;
    csw += all[3 * r + 2] / nranks_;
  }
  std::printf(
      "%-9s np=%d host_wait=%s relay=%s iters=%d  one-way us: mean %.2f  slowest %.2f  "
      "| cpu/wall per rank %.2f  invol. csw/iter per rank %.3f | pairs:%s\n",
      mode.c_str(), nranks_, c.host_wait.c_str(), c.relay.c_str(), c.iters, sum / (nranks_ / 2), mx,
      cpu, csw, per_pair.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  Cfg c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!v) {
      std::fprintf(stderr, "probe_pairs: %s needs a value\n", a.c_str());
      return 2;
    }
    ++i;
    if (a == "-i") c.iters = std::atoi(v);
    else if (a == "-x") c.warmup = std::atoi(v);
    else if (a == "--host-wait") c.host_wait = v;
    else if (a == "--relay") c.relay = v;
    else if (a == "--modes") {
      c.modes.clear();
      for (std::string s = v; !s.empty();) {
        const size_t comma = s.find(',');
        c.modes.push_back(s.substr(0, comma));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
    } else {
      std::fprintf(stderr, "probe_pairs: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  int provided = 0;
  MK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MK(MPI_Comm_size(MPI_COMM_WORLD, &nranks_));
  bool ok = provided == MPI_THREAD_MULTIPLE && nranks_ % 2 == 0 && c.iters > 0 && c.warmup >= 0;
  for (const auto &m : c.modes)
    ok = ok && (m == "gpu-memop" || m == "gpu-spin" || m == "host-sync" || m == "gpu-only");
  ok = ok && (c.relay == "spin" || c.relay == "pause" || c.relay == "yield");
  unsigned flags = 0;
  if (c.host_wait == "spin") flags = cudaDeviceScheduleSpin;
  else if (c.host_wait == "yield") flags = cudaDeviceScheduleYield;
  else if (c.host_wait == "block") flags = cudaDeviceScheduleBlockingSync;
  else ok = ok && c.host_wait == "auto";
  if (!ok) {
    if (rank_ == 0)
      std::fprintf(stderr,
                   "probe_pairs: needs an even number of ranks, MPI_THREAD_MULTIPLE, "
                   "modes among gpu-memop,gpu-spin,host-sync,gpu-only, --host-wait "
                   "auto|spin|yield|block, --relay spin|pause|yield\n");
    MPI_Finalize();
    return 2;
  }
  peer_ = rank_ ^ 1;
  MPI_Comm node;
  MK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local = 0, ndev = 0;
  MK(MPI_Comm_rank(node, &local));
  MK(MPI_Comm_free(&node));
  CK(cudaGetDeviceCount(&ndev));
  const int dev = local % ndev;
  CK(cudaSetDevice(dev));
  if (flags) CK(cudaSetDeviceFlags(flags));  // before the context is made (or replaces them)
  CK(cudaFree(nullptr));                     // makes the primary context
  CK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  CK(cudaHostAlloc(&h_words_, 4096, cudaHostAllocMapped));
  std::memset(h_words_, 0, 4096);
  void *d = nullptr;
  CK(cudaHostGetDevicePointer(&d, h_words_, 0));
  d_words_ = static_cast<uint64_t *>(d);
  d_trig_ = CUdeviceptr(d_words_ + kTrig);
  d_arrived_ = CUdeviceptr(d_words_ + kArrived);
  CUdevice cudev;
  CU(cuDeviceGet(&cudev, dev));
  int memops = 0;
  CU(cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, cudev));
  if (rank_ == 0) {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, dev));
    unsigned f = 0;
    CK(cudaGetDeviceFlags(&f));
    std::printf(
        "# probe_pairs: %s, %d ranks on %d device(s), 64-bit memops %d, context "
        "schedule flags 0x%x (spin 1, yield 2, block 4, auto 0), %u CPUs\n",
        prop.name, nranks_, ndev, memops, f & cudaDeviceScheduleMask,
        std::thread::hardware_concurrency());
    std::fflush(stdout);
  }
  for (const auto &m : c.modes) run_mode(c, m);
  MK(MPI_Barrier(MPI_COMM_WORLD));
  if (d_peer_) CK(cudaIpcCloseMemHandle(d_peer_));
  if (d_own_) CK(cudaFree(d_own_));
  CK(cudaFreeHost(h_words_));
  CK(cudaStreamDestroy(s_));
  MPI_Finalize();
  return 0;
}
