// Helpers of the multi-rank GPU tests: a CUDA stream wrapped in an MPIX_Stream and a stream
// communicator (optionally with an mpix_trigger info key), and buffers in each placement mpix
// handles (device, managed, pinned host, pageable host). Public C API only.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"

namespace mpix_gpu_test {

#define CUDA_REQUIRE(expr)                          \
  do {                                              \
    cudaError_t rc_ = (expr);                       \
    INFO(#expr << ": " << cudaGetErrorString(rc_)); \
    REQUIRE(rc_ == cudaSuccess);                    \
  } while (0)

inline int world_rank() {
  int r = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

inline int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

enum class Place { device, managed, pinned, pageable };
inline const char *place_name(Place p) {
  static const char *const kNames[] = {"device", "managed", "pinned host", "pageable host"};
  return kNames[static_cast<int>(p)];
}
inline std::vector<Place> all_places() {
  return {Place::device, Place::managed, Place::pinned, Place::pageable};
}

// A buffer of @p bytes in one placement, on the current device.
class GpuBuf {
 public:
  GpuBuf(Place p, std::size_t bytes) : place_(p), bytes_(bytes ? bytes : 1) {
    cudaError_t rc = cudaSuccess;
    switch (p) {
      case Place::device:
        rc = cudaMalloc(&p_, bytes_);
        break;
      case Place::managed:
        rc = cudaMallocManaged(&p_, bytes_);
        break;
      case Place::pinned:
        rc = cudaMallocHost(&p_, bytes_);
        break;
      case Place::pageable:
        p_ = std::malloc(bytes_);
        break;
    }
    INFO("allocating " << bytes_ << " bytes of " << place_name(p) << ": "
                       << cudaGetErrorString(rc));
    REQUIRE((rc == cudaSuccess && p_));
  }
  ~GpuBuf() {
    switch (place_) {
      case Place::device:
      case Place::managed:
        cudaFree(p_);
        break;
      case Place::pinned:
        cudaFreeHost(p_);
        break;
      case Place::pageable:
        std::free(p_);
        break;
    }
  }
  GpuBuf(const GpuBuf &) = delete;
  GpuBuf &operator=(const GpuBuf &) = delete;

  void *get() const { return p_; }
  template <class T>
  T *as() const {
    return static_cast<T *>(p_);
  }
  // Host <-> buffer copies for setting up and checking (the test's streams are idle then).
  // cudaMemcpy from pageable memory may return before its DMA has landed, and the tests'
  // streams may be non-blocking (not ordered after the legacy stream): wait for it here.
  void upload(const void *src, std::size_t n) {
    CUDA_REQUIRE(cudaMemcpy(p_, src, n, cudaMemcpyDefault));
    CUDA_REQUIRE(cudaStreamSynchronize(cudaStreamLegacy));
  }
  void download(void *dst, std::size_t n) const {
    CUDA_REQUIRE(cudaMemcpy(dst, p_, n, cudaMemcpyDefault));
  }
  template <class T>
  std::vector<T> read(std::size_t count) const {
    std::vector<T> v(count);
    download(v.data(), count * sizeof(T));
    return v;
  }
  template <class T>
  void write(const std::vector<T> &v) {
    upload(v.data(), v.size() * sizeof(T));
  }

 private:
  Place place_;
  std::size_t bytes_;
  void *p_ = nullptr;
};

// The kind of CUDA stream the suite runs on (MPIX_TEST_STREAM; CTest runs the suites with
// each): nonblocking (cudaStreamCreateWithFlags(cudaStreamNonBlocking), the default), blocking
// (cudaStreamCreate: synchronises with the legacy default stream), legacy (the legacy default
// stream, cudaStreamLegacy) or per-thread (cudaStreamPerThread).
enum class StreamKindUnderTest { nonblocking, blocking, legacy, per_thread };
inline StreamKindUnderTest stream_kind_under_test() {
  const char *v = std::getenv("MPIX_TEST_STREAM");
  std::string k = v && *v ? v : "nonblocking";
  if (k == "blocking") return StreamKindUnderTest::blocking;
  if (k == "legacy") return StreamKindUnderTest::legacy;
  if (k == "per-thread") return StreamKindUnderTest::per_thread;
  if (k != "nonblocking") {
    std::fprintf(stderr, "MPIX_TEST_STREAM=%s is not nonblocking|blocking|legacy|per-thread\n",
                 k.c_str());
    std::abort();
  }
  return StreamKindUnderTest::nonblocking;
}
inline const char *stream_kind_name(StreamKindUnderTest k) {
  static const char *const kNames[] = {"nonblocking", "blocking", "legacy", "per-thread"};
  return kNames[static_cast<int>(k)];
}

// A CUDA stream on the current device of the kind under test (MPIX_TEST_STREAM), its
// MPIX_Stream (trigger mode from @p trigger, or MPIX_TRIGGER when null) and a stream
// communicator over @p parent. Collective over @p parent.
class CudaStreamComm {
 public:
  explicit CudaStreamComm(const char *trigger = nullptr, MPI_Comm parent = MPI_COMM_WORLD)
      : kind(stream_kind_under_test()) {
    switch (kind) {
      case StreamKindUnderTest::nonblocking:
        CUDA_REQUIRE(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
        owned_ = true;
        break;
      case StreamKindUnderTest::blocking:
        CUDA_REQUIRE(cudaStreamCreate(&cs));
        owned_ = true;
        break;
      case StreamKindUnderTest::legacy:
        cs = cudaStreamLegacy;
        break;
      case StreamKindUnderTest::per_thread:
        cs = cudaStreamPerThread;
        break;
    }
    INFO("stream kind " << stream_kind_name(kind));
    REQUIRE(make_stream(cs, trigger, &stream) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_comm_create(parent, stream, &comm) == MPI_SUCCESS);
  }
  ~CudaStreamComm() {
    if (stream != MPIX_STREAM_NULL) CHECK(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
    if (comm != MPI_COMM_NULL) CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
    if (stream != MPIX_STREAM_NULL) CHECK(MPIX_Stream_free(&stream) == MPI_SUCCESS);
    if (owned_ && cs) cudaStreamDestroy(cs);
  }
  CudaStreamComm(const CudaStreamComm &) = delete;
  CudaStreamComm &operator=(const CudaStreamComm &) = delete;

  static int make_stream(cudaStream_t s, const char *trigger, MPIX_Stream *out) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "cudaStream_t");
    if (trigger) MPI_Info_set(info, "mpix_trigger", trigger);
    int rc = MPIX_Info_set_hex(info, "value", &s, sizeof s);
    if (rc == MPI_SUCCESS) rc = MPIX_Stream_create(info, out);
    MPI_Info_free(&info);
    return rc;
  }

  void sync() { REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS); }

  StreamKindUnderTest kind;
  cudaStream_t cs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;

 private:
  bool owned_ = false;
};

// The trigger mode the test runs under (CTest sets MPIX_TRIGGER per registration).
inline std::string trigger_under_test() {
  const char *t = std::getenv("MPIX_TRIGGER");
  return t && *t ? t : "auto";
}

}  // namespace mpix_gpu_test
