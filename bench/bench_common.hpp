// Shared pieces of the OSU-style microbenchmarks: options, size sweep, the OSU table and JSON.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace bench {

struct Options {
  std::size_t min_size = 1;
  std::size_t max_size = 1 << 22;
  int iters = 10000;       // -i: iterations for small messages
  int iters_large = 1000;  // iterations above large_size
  int warmup = 100;        // -x
  int warmup_large = 10;
  std::size_t large_size = 8192;
  int window = 64;                           // bandwidth window
  std::string mode;                          // --mode
  std::string device = "host";               // -d host|cuda
  std::string buffers = "H H";               // OSU placement of the two ranks' buffers (GPU modes)
  std::string provider;                      // --provider mpi|ofi:<prov>
  std::string json;                          // --json FILE
  std::map<std::string, std::string> extra;  // --set key=value, for mode-specific knobs
  // --host-wait spin|yield|block (-d cuda): the CUDA context's scheduling flag; empty: auto.
  std::string host_wait;
};

// Parses argv (before MPI_Init: --provider sets MPIX_PROVIDER / MPIX_OFI_PROVIDER).
// Exits with a usage message on bad input.
Options parse(int argc, char **argv, const char *name, const char *default_mode,
              const std::string &modes_help);

// Sizes min..max in powers of two (0 first if min is 0).
std::vector<std::size_t> sizes(const Options &o);
int iters_for(const Options &o, std::size_t size);
int warmup_for(const Options &o, std::size_t size);

struct Row {
  std::size_t size;
  double value;
};

// OSU header ("# OSU-style ... \n# Size  Avg Latency(us)") on rank 0.
void print_header(const char *title, const Options &o, const char *column);
void print_row(const Row &r);
// What every JSON result names: the host, the UTC date and the number of ranks.
struct RunInfo {
  char host[256] = {0};
  char date[64] = {0};
  int ranks = 0;
};
RunInfo run_info();
// Writes {"benchmark":..., "mode":..., ..., "results":[{"size":..,"<key>":..}]} on rank 0.
void write_json(const Options &o, const char *bench, const char *key, const std::vector<Row> &rows);

// An MPIX stream of the native stream handle at @p handle (@p size bytes) of MPI_Info "type"
// @p type, with the "mpix_trigger" key where @p trigger is not null.
MPIX_Stream make_stream(const char *type, const void *handle, std::size_t size,
                        const char *trigger = nullptr);

// An enqueue-capable host-stream communicator for the host modes.
struct HostStreamComm {
  mpix_host_stream_t host_stream = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  HostStreamComm();
  ~HostStreamComm();
  void synchronize();
};

// mpix_scale's streams and buffers: host streams and host memory, or (-d cuda) CUDA streams of
// the rank's GPU with pinned host or device buffers.
struct ScaleComm {
  virtual ~ScaleComm() = default;
  virtual MPI_Comm comm() const = 0;
  virtual void synchronize() = 0;
};
struct ScaleBackend {
  virtual ~ScaleBackend() = default;
  virtual const char *name() const = 0;  // for the header line
  virtual std::unique_ptr<ScaleComm> make_comm() = 0;
  virtual long *alloc(std::size_t n) = 0;  // n longs
  virtual void release(long *p) = 0;
  virtual void put(long *dst, const long *src, std::size_t n) = 0;  // from host memory
  virtual void get(long *dst, const long *src, std::size_t n) = 0;  // into host memory
};
std::unique_ptr<ScaleBackend> host_scale_backend();
// Null where the benchmarks were built without CUDA.
std::unique_ptr<ScaleBackend> cuda_scale_backend(bool device_buffers);

// GPU modes register here (bench/cuda/*.cu when built with CUDA).
using LatencyFn = std::function<double(const Options &, std::size_t size, int iters, int warmup)>;
using BwFn = LatencyFn;
void register_gpu_latency_modes(std::map<std::string, LatencyFn> &modes);
void register_gpu_bw_modes(std::map<std::string, BwFn> &modes);

void check(int rc, const char *what);

}  // namespace bench
