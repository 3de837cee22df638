// Where the Jacobi example computes: a stream and the work it runs in order. Two
// implementations, so the same solver source runs
//   * on an mpix host stream (host functions; runs everywhere, tested in CI), device_host.cpp
//   * on a cudaStream_t (kernels on device memory), device_cuda.cu
// The solver only enqueues work here; which MPI calls surround that work is the difference
// between the classic, the mpix and the partitioned variant (solver.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "mpix/mpix.h"

namespace jacobi {

// The four sides of a rank's block, in the order halos are packed: [N | S | W | E].
enum Side { kNorth = 0, kSouth = 1, kWest = 2, kEast = 3 };

// Which sides have a neighbour (bit 1 << Side). Sides without one keep their boundary values.
using SideMask = unsigned;

// The partitioned variant's send requests, exported to the device (MPIX_Prequest_create), by
// side. Side s's halo is split into parts[s] equal partitions (0: no neighbour, not sent);
// partition k holds elements [k * len / parts[s], (k + 1) * len / parts[s]) of that halo.
struct HaloReady {
  MPIX_Prequest preq[4];
  int parts[4];
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char *name() const = 0;

  // Memory the compute works on (device memory on a GPU) and page-locked host memory.
  virtual double *alloc(std::size_t n) = 0;
  virtual void free(double *p) = 0;
  virtual double *alloc_host(std::size_t n) = 0;
  virtual void free_host(double *p) = 0;
  // True when alloc() memory is host memory, so plain MPI can use it without staging copies.
  virtual bool host_accessible() const = 0;
  // Blocking copies between host memory and alloc() memory (setup and results only).
  virtual void upload(double *dst, const double *src, std::size_t n) = 0;
  virtual void download(double *dst, const double *src, std::size_t n) = 0;

  // ---- Work run in stream order: each call only enqueues. ----
  // Copy of @p n doubles, any direction.
  virtual void copy_async(double *dst, const double *src, std::size_t n) = 0;
  // unew = Jacobi update of u on the nx x ny interior; u and unew are (ny+2) x (nx+2).
  virtual void jacobi(const double *u, double *unew, int nx, int ny) = 0;
  // Copies u's outermost interior rows and columns into @p send = [N nx | S nx | W ny | E ny].
  virtual void pack(const double *u, int nx, int ny, double *send) = 0;
  // The partitioned variant's pack: as pack(), but only the sides with partitions in @p ready,
  // and each partition, as soon as it is written, is marked ready with the device-side
  // MPIX_Pready (mpix/mpix_device.h): the kernel itself releases the halo for sending. @p send
  // must be host-accessible (alloc_host()), as partitioned buffers must.
  virtual void pack_pready(const double *u, int nx, int ny, double *send,
                           const HaloReady &ready) = 0;
  // Copies @p recv (same layout) into u's halo rows and columns on the sides in @p have.
  virtual void unpack(const double *recv, int nx, int ny, SideMask have, double *u) = 0;
  // *host_out (host memory) = sum over the interior of (unew - u)^2.
  virtual void residual(const double *u, const double *unew, int nx, int ny, double *host_out) = 0;
  // Records that the stream got here; returns a ticket for wait_mark().
  virtual long mark() = 0;
  // ---- Host side. ----
  // Blocks until the stream has passed mark() @p ticket (only the last few tickets are kept).
  virtual void wait_mark(long ticket) = 0;
  // Blocks until everything enqueued so far has run.
  virtual void synchronize() = 0;
  // An MPIX_Stream over this device's stream (info "type" and "value"), for the mpix variant.
  virtual int make_mpix_stream(MPIX_Stream *out) = 0;
};

// "host", "cuda" or "cuda-pdl" (if built; its kernels launched as programmatic dependents). @p comm
// picks the GPU: node-local rank modulo the GPUs seen. Returns null and fills @p why if the kind is
// not built or no device is present.
std::unique_ptr<Device> make_device(const std::string &kind, MPI_Comm comm, std::string *why);
std::unique_ptr<Device> make_host_device();
#ifdef JACOBI_HAVE_CUDA
// @p pdl: every kernel launched as a programmatic dependent of the one before it (device
// "cuda-pdl").
std::unique_ptr<Device> make_cuda_device(MPI_Comm comm, std::string *why, bool pdl);
#endif

// A buffer of alloc() or alloc_host() memory, freed with its device.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device &dev, std::size_t n, bool host) : dev_(&dev), host_(host), n_(n) {
    p_ = host ? dev.alloc_host(n) : dev.alloc(n);
  }
  ~Buffer() { reset(); }
  Buffer(Buffer &&o) noexcept { *this = std::move(o); }
  Buffer &operator=(Buffer &&o) noexcept {
    if (this != &o) {
      reset();
      dev_ = o.dev_;
      host_ = o.host_;
      p_ = o.p_;
      n_ = o.n_;
      o.p_ = nullptr;
    }
    return *this;
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  double *get() const { return p_; }
  std::size_t size() const { return n_; }
  // True when it holds @p n elements of @p dev's memory of that kind (alloc_host() if @p host).
  bool holds(const Device &dev, std::size_t n, bool host) const {
    return p_ && dev_ == &dev && n_ == n && host_ == host;
  }
  void swap(Buffer &o) noexcept {
    std::swap(dev_, o.dev_);
    std::swap(host_, o.host_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }

 private:
  void reset() {
    if (p_) host_ ? dev_->free_host(p_) : dev_->free(p_);
    p_ = nullptr;
  }
  Device *dev_ = nullptr;
  bool host_ = false;
  double *p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace jacobi
