#include "bench_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace bench {

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "bench: %s failed (%d)\n", what, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void usage(const char *name, const std::string &modes_help) {
  std::fprintf(stderr,
               "usage: %s [--mode MODE] [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-W WINDOW]\n"
               "          [-d host|cuda] [--buffers \"D D\"|\"H H\"] [--provider mpi|ofi:<prov>]\n"
               "          [--json FILE] [--set key=value] [--host-wait spin|yield|block]\n"
               "modes: %s\n",
               name, modes_help.c_str());
  std::exit(2);
}

Options parse(int argc, char **argv, const char *name, const char *default_mode,
              const std::string &modes_help) {
  Options o;
  o.mode = default_mode;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(name, modes_help);
      return argv[++i];
    };
    if (a == "--mode") o.mode = next();
    else if (a == "-m") {
      std::string v = next();
      auto c = v.find(':');
      if (c == std::string::npos) o.max_size = std::strtoull(v.c_str(), nullptr, 0);
      else {
        if (c > 0) o.min_size = std::strtoull(v.substr(0, c).c_str(), nullptr, 0);
        o.max_size = std::strtoull(v.substr(c + 1).c_str(), nullptr, 0);
      }
    } else if (a == "-i") o.iters = o.iters_large = std::atoi(next().c_str());
    else if (a == "-x") o.warmup = o.warmup_large = std::atoi(next().c_str());
    else if (a == "-W") o.window = std::atoi(next().c_str());
    else if (a == "-d") o.device = next();
    else if (a == "--buffers") o.buffers = next();
    else if (a == "--provider") o.provider = next();
    else if (a == "--json") o.json = next();
    else if (a == "--host-wait") o.host_wait = next();
    else if (a == "--set") {
      std::string v = next();
      auto eq = v.find('=');
      if (eq == std::string::npos) usage(name, modes_help);
      o.extra[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "-h" || a == "--help") usage(name, modes_help);
    else if (a.size() == 3 && (a == "D D" || a == "H H" || a == "D H" || a == "H D")) o.buffers = a;
    else usage(name, modes_help);
  }
  if (o.min_size > o.max_size || o.iters <= 0 || o.window <= 0) usage(name, modes_help);
  // How a CUDA host thread waits for the GPU (the context's scheduling flag): -d cuda only.
  if (!o.host_wait.empty() &&
      (o.device != "cuda" ||
       (o.host_wait != "spin" && o.host_wait != "yield" && o.host_wait != "block")))
    usage(name, modes_help);
  if (!o.provider.empty()) {
    // Must happen before MPI_Init: mpix reads its settings once.
    auto c = o.provider.find(':');
    setenv("MPIX_PROVIDER", o.provider.substr(0, c).c_str(), 1);
    if (c != std::string::npos) setenv("MPIX_OFI_PROVIDER", o.provider.substr(c + 1).c_str(), 1);
  }
  return o;
}

std::vector<std::size_t> sizes(const Options &o) {
  std::vector<std::size_t> v;
  if (o.min_size == 0) v.push_back(0);
  for (std::size_t s = o.min_size ? o.min_size : 1; s <= o.max_size; s *= 2) v.push_back(s);
  return v;
}

int iters_for(const Options &o, std::size_t size) {
  return size > o.large_size ? o.iters_large : o.iters;
}
int warmup_for(const Options &o, std::size_t size) {
  return size > o.large_size ? o.warmup_large : o.warmup;
}

static int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

void print_header(const char *title, const Options &o, const char *column) {
  if (world_rank() != 0) return;
  std::printf("# %s v0.1 (mpix)\n", title);
  std::printf("# mode: %s  device: %s  buffers: %s  provider: %s\n", o.mode.c_str(),
              o.device.c_str(), o.buffers.c_str(),
              o.provider.empty() ? "default" : o.provider.c_str());
  std::printf("# Size %*s\n", 20, column);
  std::fflush(stdout);
}

void print_row(const Row &r) {
  if (world_rank() != 0) return;
  std::printf("%-10zu%18.2f\n", r.size, r.value);
  std::fflush(stdout);
}

RunInfo run_info() {
  RunInfo r;
  gethostname(r.host, sizeof r.host - 1);
  std::time_t t = std::time(nullptr);
  std::strftime(r.date, sizeof r.date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  MPI_Comm_size(MPI_COMM_WORLD, &r.ranks);
  return r;
}

void write_json(const Options &o, const char *bench, const char *key,
                const std::vector<Row> &rows) {
  if (o.json.empty() || world_rank() != 0) return;
  FILE *f = std::fopen(o.json.c_str(), "w");
  if (!f) {
    std::perror(o.json.c_str());
    return;
  }
  const RunInfo ri = run_info();
  std::fprintf(f,
               "{\"benchmark\":\"%s\",\"mode\":\"%s\",\"device\":\"%s\",\"buffers\":\"%s\","
               "\"provider\":\"%s\",\"ranks\":%d,\"host\":\"%s\",\"date\":\"%s\",\"metric\":\"%s\","
               "\"results\":[",
               bench, o.mode.c_str(), o.device.c_str(), o.buffers.c_str(),
               o.provider.empty() ? "default" : o.provider.c_str(), ri.ranks, ri.host, ri.date,
               key);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::fprintf(f, "%s{\"size\":%zu,\"%s\":%.4f}", i ? "," : "", rows[i].size, key, rows[i].value);
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

MPIX_Stream make_stream(const char *type, const void *handle, std::size_t size,
                        const char *trigger) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", type);
  if (trigger) MPI_Info_set(info, "mpix_trigger", trigger);
  check(MPIX_Info_set_hex(info, "value", handle, static_cast<int>(size)), "MPIX_Info_set_hex");
  MPIX_Stream st = MPIX_STREAM_NULL;
  check(MPIX_Stream_create(info, &st), "MPIX_Stream_create");
  MPI_Info_free(&info);
  return st;
}

HostStreamComm::HostStreamComm() {
  if (mpix_host_stream_create(&host_stream) != 0) check(MPI_ERR_OTHER, "mpix_host_stream_create");
  stream = make_stream("mpix_host_stream", &host_stream, sizeof host_stream);
  check(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm), "MPIX_Stream_comm_create");
}

HostStreamComm::~HostStreamComm() {
  synchronize();
  MPI_Comm_free(&comm);
  MPIX_Stream_free(&stream);
  mpix_host_stream_destroy(&host_stream);
}

void HostStreamComm::synchronize() {
  check(MPIX_Stream_synchronize(stream), "MPIX_Stream_synchronize");
}

namespace {

struct HostScaleComm final : ScaleComm {
  HostStreamComm c;
  MPI_Comm comm() const override { return c.comm; }
  void synchronize() override { c.synchronize(); }
};

struct HostScaleBackend final : ScaleBackend {
  const char *name() const override { return "host streams"; }
  std::unique_ptr<ScaleComm> make_comm() override { return std::make_unique<HostScaleComm>(); }
  long *alloc(std::size_t n) override { return new long[n ? n : 1](); }
  void release(long *p) override { delete[] p; }
  void put(long *dst, const long *src, std::size_t n) override { std::copy(src, src + n, dst); }
  void get(long *dst, const long *src, std::size_t n) override { std::copy(src, src + n, dst); }
};

}  // namespace

std::unique_ptr<ScaleBackend> host_scale_backend() { return std::make_unique<HostScaleBackend>(); }

#ifndef MPIX_BENCH_CUDA
void register_gpu_latency_modes(std::map<std::string, LatencyFn> &) {}
void register_gpu_bw_modes(std::map<std::string, BwFn> &) {}
std::unique_ptr<ScaleBackend> cuda_scale_backend(bool) { return nullptr; }
#endif

}  // namespace bench
