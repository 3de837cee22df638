// mpix_halo: time per iteration of the Jacobi example (examples/jacobi), classic MPI vs. mpix
// (enqueued) vs. mpix partitioned (kernel-triggered), over per-rank block sizes from
// latency-bound (64^2) to bandwidth-bound (8192^2).
//
//   mpirun -np 2 mpix_halo [--device host|cuda|cuda-pdl] [--sizes 64,128,...] [--dims RxC]
//                          [--check-every K] [--reps R] [--seconds S] [--json FILE]
//                          [--halo-buffers device|host] [--partitions P]
//                          [--variants classic,mpix,partitioned]
//
// Each rank owns an n x n block (global grid dims[1]*n wide, dims[0]*n tall; default 1x2, so
// the two ranks swap one packed column per iteration). One iteration is the example's full
// loop body: halo exchange (pack, send, receive, unpack), the Jacobi update, and every K
// iterations the global residual. For each size a short pilot run (which also warms up)
// picks the iteration count so one repetition takes about S seconds; then R repetitions
// alternate the variants, and the median time per iteration of each is reported (the slowest
// rank's time, from after the first iterations to the drained stream). --halo-buffers applies
// to every variant.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "jacobi.hpp"

namespace {

struct Options {
  std::string device = "host";
  std::vector<int> sizes = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
  int dims[2] = {1, 2};
  int check_every = 10;
  int reps = 5;
  double seconds = 0.5;
  bool host_halos = false;  // --halo-buffers host: kernels pack into page-locked host memory
  int partitions = 1;       // partitioned: send partitions per halo (at most)
  std::vector<jacobi::Variant> variants = {jacobi::Variant::classic, jacobi::Variant::mpix,
                                           jacobi::Variant::partitioned};
  std::string json;
};

struct Row {
  int n = 0;
  jacobi::Variant variant = jacobi::Variant::classic;
  int iters = 0;
  std::vector<double> us;       // per repetition, microseconds per iteration
  std::vector<double> host_us;  // per repetition, host thread busy (not waiting) per iteration
  // per step (jacobi::HostStep), per repetition: host time per iteration, mean over the ranks
  std::vector<double> step_us[jacobi::kHostSteps];
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  double median() const { return median(us); }
  double min() const { return *std::min_element(us.begin(), us.end()); }
};

bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char *v = argv[++i];
    if (a == "--device") o->device = v;
    else if (a == "--sizes") {
      o->sizes.clear();
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) o->sizes.push_back(std::atoi(t.c_str()));
    } else if (a == "--dims") {
      if (std::sscanf(v, "%dx%d", &o->dims[0], &o->dims[1]) != 2) return false;
    } else if (a == "--check-every") o->check_every = std::atoi(v);
    else if (a == "--reps") o->reps = std::atoi(v);
    else if (a == "--seconds") o->seconds = std::atof(v);
    else if (a == "--json") o->json = v;
    else if (a == "--partitions") o->partitions = std::atoi(v);
    else if (a == "--variants") {
      o->variants.clear();
      std::stringstream ss(v);
      jacobi::Variant var;
      for (std::string t; std::getline(ss, t, ',');) {
        if (!jacobi::parse_variant(t, &var)) return false;
        o->variants.push_back(var);
      }
    } else if (a == "--halo-buffers") {
      if (std::strcmp(v, "host") && std::strcmp(v, "device")) return false;
      o->host_halos = !std::strcmp(v, "host");
    } else return false;
  }
  for (int n : o->sizes)
    if (n < 1) return false;
  return o->reps >= 1 && o->check_every >= 1 && o->seconds > 0 && o->partitions >= 1 &&
         !o->variants.empty();
}

jacobi::Params params(const Options &o, int n, jacobi::Variant v, int iters, int warmup) {
  jacobi::Params p;
  p.dims[0] = o.dims[0];
  p.dims[1] = o.dims[1];
  p.nx = n * o.dims[1];
  p.ny = n * o.dims[0];
  p.iters = iters + warmup;
  p.warmup = warmup;
  p.check_every = o.check_every;
  p.variant = v;
  p.host_halos = o.host_halos;
  p.partitions = o.partitions;
  return p;
}

double us_per_iter(const jacobi::Result &r) { return 1e6 * r.seconds / r.timed_iters; }

// The busiest rank's host thread time in the loop, less time blocked on the residual: for mpix
// and partitioned what enqueueing an iteration costs the host; for classic the whole iteration.
double host_us_per_iter(const jacobi::Result &r) {
  double mine = 1e6 * (r.host_loop_seconds - r.host_wait_seconds) / r.timed_iters, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

// This rank's host time per iteration in each step, averaged over the ranks.
void host_steps_per_iter(const jacobi::Result &r, double out[jacobi::kHostSteps]) {
  double mine[jacobi::kHostSteps];
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int k = 0; k < jacobi::kHostSteps; ++k)
    mine[k] = r.timed_iters ? 1e6 * r.host_step_seconds[k] / r.timed_iters : 0;
  MPI_Allreduce(mine, out, jacobi::kHostSteps, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int k = 0; k < jacobi::kHostSteps; ++k) out[k] /= size;
}

void write_json(const Options &o, int ranks, const std::vector<Row> &rows) {
  FILE *f = std::fopen(o.json.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "mpix_halo: cannot write %s\n", o.json.c_str());
    return;
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::fprintf(f,
               "{\n  \"benchmark\": \"mpix_halo\",\n  \"device\": \"%s\",\n  \"host\": \"%s\",\n"
               "  \"ranks\": %d,\n  \"dims\": [%d, %d],\n  \"check_every\": %d,\n"
               "  \"reps\": %d,\n  \"halo_buffers\": \"%s\",\n  \"partitions\": %d,\n"
               "  \"unit\": \"us per iteration\",\n  \"results\": [\n",
               o.device.c_str(), host, ranks, o.dims[0], o.dims[1], o.check_every, o.reps,
               o.host_halos ? "host" : "device", o.partitions);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    std::fprintf(f,
                 "    {\"n\": %d, \"variant\": \"%s\", \"iters\": %d, \"median_us\": %.3f, "
                 "\"min_us\": %.3f, \"host_busy_us\": %.3f, \"reps_us\": [",
                 r.n, jacobi::variant_name(r.variant), r.iters, r.median(), r.min(),
                 Row::median(r.host_us));
    for (std::size_t k = 0; k < r.us.size(); ++k) std::fprintf(f, "%s%.3f", k ? ", " : "", r.us[k]);
    std::fprintf(f, "], \"host_steps_us\": {");
    for (int k = 0; k < jacobi::kHostSteps; ++k)
      std::fprintf(f, "%s\"%s\": %.3f", k ? ", " : "", jacobi::host_step_name(k),
                   Row::median(r.step_us[k]));
    std::fprintf(f, "}}%s\n", i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (!parse(argc, argv, &o) || o.dims[0] * o.dims[1] != size || provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::fprintf(
          stderr,
          "usage: mpirun -np R*C mpix_halo [--device host|cuda|cuda-pdl] [--sizes 64,128,...] "
          "[--dims RxC (default 1x2)] [--check-every K] [--reps R] [--seconds S] "
          "[--halo-buffers device|host] [--partitions P] "
          "[--variants classic,mpix,partitioned] [--json FILE]  "
          "(needs MPI_THREAD_MULTIPLE)\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<Row> rows;
  try {
    std::string why;
    auto dev = jacobi::make_device(o.device, MPI_COMM_WORLD, &why);
    int have = dev ? 1 : 0, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (!dev) std::fprintf(stderr, "mpix_halo: rank %d: %s\n", rank, why.c_str());
      MPI_Finalize();
      return 77;
    }
    const std::vector<jacobi::Variant> &vs = o.variants;
    const std::size_t nv = vs.size();
    if (rank == 0) {
      std::printf(
          "# mpix_halo: Jacobi iteration time, %d ranks (%dx%d), device %s, residual "
          "every %d iterations, median of %d\n",
          size, o.dims[0], o.dims[1], o.device.c_str(), o.check_every, o.reps);
      std::printf(
          "# halo buffers in %s memory (partitioned: at most %d send partitions per "
          "halo); speedup: first variant's time / "
          "this one's; host: the host thread's busy time per iteration (enqueueing)\n",
          o.host_halos ? "page-locked host" : "compute", o.partitions);
      std::printf("# %-6s %7s", "n/rank", "iters");
      for (jacobi::Variant v : vs) std::printf(" %12s(us/it)", jacobi::variant_name(v));
      for (std::size_t k = 1; k < nv; ++k)
        std::printf(" %12s:speedup", jacobi::variant_name(vs[k]));
      for (std::size_t k = 0; k < nv; ++k)
        if (vs[k] != jacobi::Variant::classic)
          std::printf(" %10s:host(us)", jacobi::variant_name(vs[k]));
      std::printf("\n");
    }
    for (int n : o.sizes) {
      // One set of halo buffers per size for every run of it, as a real code keeps its arrays.
      jacobi::HaloBuffers halos;
      // Pilot: every variant, 20 iterations; the slowest sets the count for all.
      double pilot_us = 0;
      for (jacobi::Variant v : vs) {
        jacobi::Result r = jacobi::solve(MPI_COMM_WORLD, params(o, n, v, 20, 2), *dev, &halos);
        pilot_us = std::max(pilot_us, us_per_iter(r));
      }
      int iters = static_cast<int>(o.seconds * 1e6 / pilot_us);
      iters = std::max(10, std::min(iters, 20000));
      if (iters >= o.check_every) iters -= iters % o.check_every;  // whole residual periods
      const int warmup = std::max(2, std::min(50, iters / 10));
      std::vector<Row> row(nv);
      for (std::size_t k = 0; k < nv; ++k) {
        row[k].n = n;
        row[k].variant = vs[k];
        row[k].iters = iters;
      }
      for (int rep = 0; rep < o.reps; ++rep)
        for (std::size_t j = 0; j < nv; ++j) {
          // Rotate which variant runs first, so slow drifts affect all alike.
          const std::size_t k = (j + rep) % nv;
          jacobi::Result r =
              jacobi::solve(MPI_COMM_WORLD, params(o, n, vs[k], iters, warmup), *dev, &halos);
          row[k].us.push_back(us_per_iter(r));
          row[k].host_us.push_back(host_us_per_iter(r));
          double steps[jacobi::kHostSteps];
          host_steps_per_iter(r, steps);
          for (int i = 0; i < jacobi::kHostSteps; ++i) row[k].step_us[i].push_back(steps[i]);
        }
      if (rank == 0) {
        std::printf("  %-6d %7d", n, iters);
        for (const Row &r : row) std::printf(" %19.2f", r.median());
        for (std::size_t k = 1; k < nv; ++k)
          std::printf(" %19.2fx", row[0].median() / row[k].median());
        for (const Row &r : row)
          if (r.variant != jacobi::Variant::classic) std::printf(" %19.2f", Row::median(r.host_us));
        std::printf("\n");
        // Where the host time goes, per variant (mean of the ranks, median of the repetitions).
        for (const Row &r : row) {
          std::printf("#   host steps n=%d %-11s us/it:", n, jacobi::variant_name(r.variant));
          for (int i = 0; i < jacobi::kHostSteps; ++i)
            std::printf(" %s %.2f", jacobi::host_step_name(i), Row::median(r.step_us[i]));
          std::printf("\n");
        }
      }
      std::fflush(stdout);
      rows.insert(rows.end(), row.begin(), row.end());
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mpix_halo: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0 && !o.json.empty()) write_json(o, size, rows);
  MPI_Finalize();
  return 0;
}
