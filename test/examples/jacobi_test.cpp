// The Jacobi example (examples/jacobi) against its serial reference, on host streams: every
// variant (classic MPI, mpix, and mpix partitioned with one and with up to four send
// partitions per halo), several grid sizes, every 1D and 2D process grid of the rank count this
// test runs with (CTest runs it with 1, 2 and 4 ranks).
//
// What "the same answer" means here:
//  * The field must be bitwise identical to the serial reference. Every implementation applies
//    the same function (stencil.hpp: one multiply of two sums, nothing an FMA could contract)
//    to the same neighbour values, so the operations per point and their order do not depend
//    on the decomposition or the variant; any difference is a halo bug, not rounding.
//  * The residual is a global sum, taken in another order (per block, then across ranks by
//    MPI_Allreduce or MPI_Iallreduce, whose algorithms may differ). Its square is a sum of
//    n = NX*NY non-negative terms computed from bitwise-equal fields; any summation order is
//    within gamma_(n-1) ~ (n-1)*2^-53 of the exact sum (Higham, Accuracy and Stability of
//    Numerical Algorithms, sec. 4.2), so two orders differ by at most 2*gamma_(n-1) relative,
//    and the square root halves that and adds one rounding: n * DBL_EPSILON (= n * 2^-52) is a
//    safe bound.
#include "jacobi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "stencil.hpp"

namespace {

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Every 2D process grid {rows, cols} of the world size (1D grids included: 1xN and Nx1).
std::vector<std::pair<int, int>> process_grids() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::pair<int, int>> g;
  for (int r = 1; r <= size; ++r)
    if (size % r == 0) g.push_back({r, size / r});
  return g;
}

bool bitwise_equal(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

bool residual_close(double a, double b, long n) {
  return std::fabs(a - b) <= static_cast<double>(n) * DBL_EPSILON * std::fmax(a, b);
}

// Runs every variant with @p p on the world and checks them against the reference on rank 0.
// Only CHECKs on rank 0: a REQUIRE there would leave the other ranks alone in the next
// collective.
void check_against_reference(jacobi::Params p, jacobi::Device &dev) {
  jacobi::Reference ref;
  if (rank() == 0) {
    ref = jacobi::reference(p);
    // The run must have changed the field, or a solver that did nothing would pass.
    std::vector<double> start;
    for (long y = 1; y <= p.ny; ++y)
      for (long x = 1; x <= p.nx; ++x) start.push_back(jacobi::start_value(y, x, p.ny, p.nx));
    CHECK_FALSE(bitwise_equal(start, ref.field));
  }
  std::vector<double> classic_residuals;
  // Partitioned with one send partition per halo, and with at most four: each side then picks
  // the largest count <= 4 that divides its halo length, so by block size halos go as 4, 3, 2
  // or 1 partitions (23 and 37 are prime), against the receiver's one partition per halo.
  const std::pair<jacobi::Variant, int> runs[] = {{jacobi::Variant::classic, 1},
                                                  {jacobi::Variant::mpix, 1},
                                                  {jacobi::Variant::partitioned, 1},
                                                  {jacobi::Variant::partitioned, 4}};
  // One set of halo buffers for every run, as mpix_halo keeps them (jacobi::HaloBuffers): each
  // run starts on the last one's allocations and contents, and must still match.
  jacobi::HaloBuffers halos;
  const double *kept = nullptr;
  for (auto run : runs) {
    const jacobi::Variant v = run.first;
    p.variant = v;
    p.partitions = run.second;
    INFO("variant " << jacobi::variant_name(v) << " (partitions " << p.partitions << "), grid "
                    << p.ny << "x" << p.nx << ", processes " << p.dims[0] << "x" << p.dims[1]
                    << ", K " << p.check_every << ", tol " << p.tol);
    jacobi::Result r = jacobi::solve(MPI_COMM_WORLD, p, dev, &halos);
    if (kept) CHECK(halos.send.get() == kept);  // reused, not allocated anew
    kept = halos.send.get();
    std::vector<double> field = jacobi::gather_field(MPI_COMM_WORLD, r);
    if (rank() != 0) continue;
    CHECK(r.iters_done == ref.iters_done);
    CHECK(bitwise_equal(field, ref.field));
    CHECK(r.residuals.size() == ref.residuals.size());
    for (std::size_t c = 0; c < std::min(r.residuals.size(), ref.residuals.size()); ++c) {
      INFO("check " << c << ": " << r.residuals[c] << " vs reference " << ref.residuals[c]);
      CHECK(residual_close(r.residuals[c], ref.residuals[c], static_cast<long>(p.nx) * p.ny));
    }
    if (v == jacobi::Variant::classic) classic_residuals = r.residuals;
    else
      for (std::size_t c = 0; c < std::min(r.residuals.size(), classic_residuals.size()); ++c)
        CHECK(residual_close(r.residuals[c], classic_residuals[c], static_cast<long>(p.nx) * p.ny));
  }
}

}  // namespace

TEST_CASE("jacobi: every variant equals the serial reference bitwise on every process grid",
          "[jacobi]") {
  auto dev = jacobi::make_host_device();
  // Square, rectangular with uneven splits (37 and 23 do not divide by 2 or 4), and thin
  // enough that a 1x4 grid leaves single-column blocks.
  const std::pair<int, int> sizes[] = {{16, 16}, {37, 23}, {4, 9}, {64, 40}};
  for (auto grid : process_grids())
    for (auto size : sizes) {
      jacobi::Params p;
      p.nx = size.first;
      p.ny = size.second;
      if (grid.first > p.ny || grid.second > p.nx) continue;
      p.dims[0] = grid.first;
      p.dims[1] = grid.second;
      p.iters = 30;
      p.check_every = 5;
      check_against_reference(p, *dev);
    }
}

TEST_CASE(
    "jacobi: the default process grid (MPI_Dims_create) and a check interval that does "
    "not divide the iteration count",
    "[jacobi]") {
  auto dev = jacobi::make_host_device();
  jacobi::Params p;
  p.nx = 29;
  p.ny = 31;
  p.iters = 23;
  p.check_every = 4;
  check_against_reference(p, *dev);
}

TEST_CASE("jacobi: with a tolerance every variant stops at the reference's iteration", "[jacobi]") {
  auto dev = jacobi::make_host_device();
  jacobi::Params p;
  p.nx = 24;
  p.ny = 20;
  p.iters = 400;
  p.check_every = 5;
  // A tolerance between residuals 4 and 5 of the run (their geometric mean: relatively far
  // from both, compared with the rounding bound above). Check 5's residual is below it; the
  // stopping rule looks at check c-1 at check c, so every implementation must stop at check 6,
  // after 7 * K iterations.
  double tol = 0;
  if (rank() == 0) {
    jacobi::Params q = p;
    q.iters = 40;
    jacobi::Reference r = jacobi::reference(q);
    CHECK(r.residuals.size() == 8);
    if (r.residuals.size() == 8) {
      CHECK(r.residuals[5] < r.residuals[4]);
      tol = std::sqrt(r.residuals[4] * r.residuals[5]);
    }
  }
  MPI_Bcast(&tol, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  p.tol = tol;
  if (rank() == 0) CHECK(jacobi::reference(p).iters_done == 7 * p.check_every);
  check_against_reference(p, *dev);
}

TEST_CASE("jacobi: repeated solves on one device leave nothing pending", "[jacobi]") {
  // The stream communicator and MPIX stream (and the partitioned requests) are freed at the
  // end of every solve (freeing any of them with work pending fails); three solves in a row on
  // one host stream must all work.
  auto dev = jacobi::make_host_device();
  for (jacobi::Variant v : {jacobi::Variant::mpix, jacobi::Variant::partitioned}) {
    INFO("variant " << jacobi::variant_name(v));
    jacobi::Params p;
    p.nx = 12;
    p.ny = 12;
    p.iters = 10;
    p.check_every = 3;
    p.variant = v;
    p.partitions = 2;
    std::vector<double> first;
    for (int i = 0; i < 3; ++i) {
      jacobi::Result r = jacobi::solve(MPI_COMM_WORLD, p, *dev);
      if (i == 0) first = r.field;
      else CHECK(bitwise_equal(first, r.field));
    }
  }
}
