// The Jacobi compute on an mpix host stream: every step is a host function run in stream order
// by the stream's worker thread, the stand-in for a GPU kernel on machines without a GPU.
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "device.hpp"
#include "mpix/mpix_device.h"  // the device-side MPIX_Pready, here an inline host function
#include "mpix/mpix_host_stream.h"
#include "stencil.hpp"

namespace jacobi {
namespace {

class HostDevice final : public Device {
 public:
  HostDevice() {
    if (mpix_host_stream_create(&hs_) != 0)
      throw std::runtime_error("mpix_host_stream_create failed");
  }
  ~HostDevice() override { mpix_host_stream_destroy(&hs_); }

  const char *name() const override { return "host"; }

  double *alloc(std::size_t n) override {
    void *p = std::calloc(n ? n : 1, sizeof(double));
    if (!p) throw std::bad_alloc();
    return static_cast<double *>(p);
  }
  void free(double *p) override { std::free(p); }
  double *alloc_host(std::size_t n) override { return alloc(n); }
  void free_host(double *p) override { std::free(p); }
  bool host_accessible() const override { return true; }
  void upload(double *dst, const double *src, std::size_t n) override {
    synchronize();
    std::memcpy(dst, src, n * sizeof(double));
  }
  void download(double *dst, const double *src, std::size_t n) override {
    synchronize();
    std::memcpy(dst, src, n * sizeof(double));
  }

  void copy_async(double *dst, const double *src, std::size_t n) override {
    enqueue([=] { std::memcpy(dst, src, n * sizeof(double)); });
  }

  void jacobi(const double *u, double *unew, int nx, int ny) override {
    enqueue([=] {
      const long w = nx + 2;
      for (long y = 1; y <= ny; ++y)
        for (long x = 1; x <= nx; ++x)
          unew[y * w + x] =
              update(u[(y - 1) * w + x], u[(y + 1) * w + x], u[y * w + x - 1], u[y * w + x + 1]);
    });
  }

  void pack(const double *u, int nx, int ny, double *send) override {
    enqueue([=] {
      const long w = nx + 2;
      std::memcpy(send, u + w + 1, nx * sizeof(double));            // north row
      std::memcpy(send + nx, u + ny * w + 1, nx * sizeof(double));  // south row
      for (long y = 1; y <= ny; ++y) {
        send[2 * nx + y - 1] = u[y * w + 1];        // west column
        send[2 * nx + ny + y - 1] = u[y * w + nx];  // east column
      }
    });
  }

  void pack_pready(const double *u, int nx, int ny, double *send, const HaloReady &ready) override {
    enqueue([=] {
      const long w = nx + 2;
      const long first[4] = {w + 1, ny * w + 1, w + 1, w + nx};  // the side's cell 0 in u
      const long step[4] = {1, 1, w, w};                         // to its next cell
      const long off[4] = {0, nx, 2 * nx, 2 * nx + ny};          // its halo in send
      for (int side = 0; side < 4; ++side) {
        const int parts = ready.parts[side];
        if (parts == 0) continue;
        const long per = (side < 2 ? nx : ny) / parts;
        for (int k = 0; k < parts; ++k) {
          for (long i = k * per; i < (k + 1) * per; ++i)
            send[off[side] + i] = u[first[side] + i * step[side]];
          // mpix_device.h's MPIX_Pready (on an MPIX_Prequest), not mpix.h's host call: it
          // reads the round the stream is in (written at MPIX_Start_enqueue), while the host
          // call checks the host's view, which runs iterations ahead of this worker. A misuse
          // is recorded in the request and returned by the host's next call on it.
          MPIX_Pready(k, ready.preq[side]);
        }
      }
    });
  }

  void unpack(const double *recv, int nx, int ny, SideMask have, double *u) override {
    enqueue([=] {
      const long w = nx + 2;
      if (have & (1u << kNorth)) std::memcpy(u + 1, recv, nx * sizeof(double));
      if (have & (1u << kSouth)) std::memcpy(u + (ny + 1) * w + 1, recv + nx, nx * sizeof(double));
      for (long y = 1; y <= ny; ++y) {
        if (have & (1u << kWest)) u[y * w] = recv[2 * nx + y - 1];
        if (have & (1u << kEast)) u[y * w + nx + 1] = recv[2 * nx + ny + y - 1];
      }
    });
  }

  void residual(const double *u, const double *unew, int nx, int ny, double *host_out) override {
    enqueue([=] {
      const long w = nx + 2;
      double sum = 0;
      for (long y = 1; y <= ny; ++y)
        for (long x = 1; x <= nx; ++x) {
          const double diff = unew[y * w + x] - u[y * w + x];
          sum += diff * diff;
        }
      *host_out = sum;
    });
  }

  long mark() override {
    const long ticket = ++issued_;
    enqueue([this, ticket] {
      {
        std::lock_guard<std::mutex> lk(mu_);
        passed_ = ticket;
      }
      cv_.notify_all();
    });
    return ticket;
  }

  void wait_mark(long ticket) override {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return passed_ >= ticket; });
  }

  void synchronize() override {
    if (mpix_host_stream_synchronize(hs_) != 0)
      throw std::runtime_error("mpix_host_stream_synchronize failed");
  }

  int make_mpix_stream(MPIX_Stream *out) override {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "mpix_host_stream");
    int rc = MPIX_Info_set_hex(info, "value", &hs_, sizeof hs_);
    if (rc == MPI_SUCCESS) rc = MPIX_Stream_create(info, out);
    MPI_Info_free(&info);
    return rc;
  }

 private:
  // Runs @p f in stream order. The closure lives on the heap until the worker has run it.
  template <class F>
  void enqueue(F &&f) {
    auto task = std::make_unique<std::function<void()>>(std::forward<F>(f));
    int rc = mpix_host_stream_launch(
        hs_,
        [](void *p) {
          std::unique_ptr<std::function<void()>> t(static_cast<std::function<void()> *>(p));
          (*t)();
        },
        task.get());
    if (rc != 0) throw std::runtime_error("mpix_host_stream_launch failed");
    task.release();  // the worker owns it now
  }

  mpix_host_stream_t hs_ = nullptr;
  long issued_ = 0;  // host thread only
  std::mutex mu_;
  std::condition_variable cv_;
  long passed_ = 0;  // guarded by mu_
};

}  // namespace

std::unique_ptr<Device> make_host_device() { return std::make_unique<HostDevice>(); }

}  // namespace jacobi
