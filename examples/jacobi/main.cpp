// jacobi: the 2D Jacobi example, classic MPI vs. mpix (enqueued or partitioned), on a host
// stream or a CUDA stream.
//
//   mpirun -np 4 jacobi [--device host|cuda|cuda-pdl] [--variant classic|mpix|partitioned|both|all]
//                       [-n NX] [-m NY] [--dims RxC] [--iters N] [--check-every K] [--tol T]
//                       [--partitions P] [--halo-buffers device|host] [--check]
//
// --variant both: classic and mpix; all (the default): the three of them.
// --partitions P: the partitioned variant's send partitions per halo (at most; see Params).
// --halo-buffers host: the packed halos in page-locked host memory that the kernels write and
// read directly (GPU devices; the default is device memory, like the field).
// --check: rank 0 also runs the serial reference and compares: the field must be bitwise
// identical (every implementation performs the same operations per point, stencil.hpp); the
// residuals may differ by the rounding of a sum taken in another order (see residuals_agree).
// Exit status: 0 ok, 1 mismatch or error, 2 bad arguments, 77 device not available.
#include <mpi.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "jacobi.hpp"

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: jacobi [--device host|cuda|cuda-pdl] [--variant classic|mpix|partitioned|both|all]\n"
      "              [-n NX] [-m NY] [--dims RxC] [--iters N] [--check-every K]\n"
      "              [--tol T] [--partitions P] [--halo-buffers device|host]\n"
      "              [--check]\n");
}

// Residual^2 is a sum of n = NX*NY non-negative terms computed from bitwise-equal fields. Any
// order of summation of n non-negative terms is within gamma_(n-1) ~ (n-1)*2^-53 of the exact
// sum (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2), so two
// orders differ by at most 2*gamma_(n-1) relative; the square root halves that and adds one
// rounding. n * DBL_EPSILON = n * 2^-52 covers it with room to spare.
bool residuals_agree(double a, double b, long n) {
  return std::fabs(a - b) <= static_cast<double>(n) * DBL_EPSILON * std::fmax(a, b);
}

int run(jacobi::Variant v, jacobi::Params p, jacobi::Device &dev, bool check, int rank) {
  p.variant = v;
  jacobi::Result r = jacobi::solve(MPI_COMM_WORLD, p, dev);
  std::vector<double> global = jacobi::gather_field(MPI_COMM_WORLD, r);
  int bad = 0;
  if (rank == 0) {
    std::printf("%-11s %s: %dx%d grid, %d iterations, residual %.6e, %.3f us/iteration\n",
                jacobi::variant_name(v), dev.name(), p.nx, p.ny, r.iters_done,
                r.residuals.empty() ? 0.0 : r.residuals.back(),
                r.timed_iters ? 1e6 * r.seconds / r.timed_iters : 0.0);
    if (check) {
      jacobi::Reference ref = jacobi::reference(p);
      if (ref.iters_done != r.iters_done) {
        std::printf("  MISMATCH: %d iterations, reference %d\n", r.iters_done, ref.iters_done);
        bad = 1;
      }
      if (global.size() != ref.field.size() ||
          std::memcmp(global.data(), ref.field.data(), global.size() * sizeof(double)) != 0) {
        std::size_t i = 0;
        while (i < global.size() && global[i] == ref.field[i]) ++i;
        std::printf("  MISMATCH: field differs from the serial reference at cell %zu\n", i);
        bad = 1;
      }
      if (ref.residuals.size() != r.residuals.size()) {
        std::printf("  MISMATCH: %zu residuals, reference %zu\n", r.residuals.size(),
                    ref.residuals.size());
        bad = 1;
      }
      for (std::size_t c = 0; !bad && c < ref.residuals.size(); ++c)
        if (!residuals_agree(r.residuals[c], ref.residuals[c], static_cast<long>(p.nx) * p.ny)) {
          std::printf("  MISMATCH: residual %zu is %.17g, reference %.17g\n", c, r.residuals[c],
                      ref.residuals[c]);
          bad = 1;
        }
      if (!bad) std::printf("  matches the serial reference (field bitwise, residuals)\n");
    }
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  jacobi::Params p;
  std::string device = "host", variant = "all";
  bool check = false, ny_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = true;
    if (a == "--check") check = true;
    else if (!next) ok = false;
    else if (a == "--device") device = argv[++i];
    else if (a == "--variant") variant = argv[++i];
    else if (a == "-n") p.nx = std::atoi(argv[++i]);
    else if (a == "-m") p.ny = std::atoi(argv[++i]), ny_set = true;
    else if (a == "--dims") ok = std::sscanf(argv[++i], "%dx%d", &p.dims[0], &p.dims[1]) == 2;
    else if (a == "--iters") p.iters = std::atoi(argv[++i]);
    else if (a == "--check-every") p.check_every = std::atoi(argv[++i]);
    else if (a == "--tol") p.tol = std::atof(argv[++i]);
    else if (a == "--partitions") p.partitions = std::atoi(argv[++i]);
    else if (a == "--halo-buffers") {
      const std::string b = argv[++i];
      ok = b == "device" || b == "host";
      p.host_halos = b == "host";
    } else ok = false;
    if (!ok) {
      if (rank == 0) usage();
      MPI_Finalize();
      return 2;
    }
  }
  if (!ny_set) p.ny = p.nx;
  std::vector<jacobi::Variant> variants;
  jacobi::Variant v;
  if (variant == "both") variants = {jacobi::Variant::classic, jacobi::Variant::mpix};
  else if (variant == "all")
    variants = {jacobi::Variant::classic, jacobi::Variant::mpix, jacobi::Variant::partitioned};
  else if (jacobi::parse_variant(variant, &v)) variants = {v};
  if (variants.empty() || p.nx < 1 || p.ny < 1 || p.partitions < 1) {
    if (rank == 0) usage();
    MPI_Finalize();
    return 2;
  }
  if (provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::fprintf(stderr, "jacobi: MPI_THREAD_MULTIPLE is not available\n");
    MPI_Finalize();
    return 1;
  }

  int rc = 0;
  try {
    std::string why;
    auto dev = jacobi::make_device(device, MPI_COMM_WORLD, &why);
    int have = dev ? 1 : 0, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (!dev)
        std::fprintf(stderr, "jacobi: rank %d: no %s device: %s\n", rank, device.c_str(),
                     why.c_str());
      MPI_Finalize();
      return 77;
    }
    for (jacobi::Variant var : variants) rc |= run(var, p, *dev, check, rank);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "jacobi: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}
