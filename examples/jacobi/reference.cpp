// The serial reference: one process, one global array, the same update (stencil.hpp) and the
// same stopping rule as solve(). Written as plainly as possible: no halos, no streams, no MPI.
#include <cmath>
#include <vector>

#include "jacobi.hpp"
#include "stencil.hpp"

namespace jacobi {

Reference reference(const Params &p) {
  const long NX = p.nx, NY = p.ny, W = NX + 2;
  std::vector<double> u(static_cast<std::size_t>(W) * (NY + 2));
  for (long y = 0; y < NY + 2; ++y)
    for (long x = 0; x < W; ++x) u[y * W + x] = start_value(y, x, NY, NX);
  std::vector<double> unew = u;
  Reference r;
  int it = 0;
  for (; it < p.iters; ++it) {
    for (long y = 1; y <= NY; ++y)
      for (long x = 1; x <= NX; ++x)
        unew[y * W + x] =
            update(u[(y - 1) * W + x], u[(y + 1) * W + x], u[y * W + x - 1], u[y * W + x + 1]);
    bool stop = false;
    if ((it + 1) % p.check_every == 0) {
      double sum = 0;
      for (long y = 1; y <= NY; ++y)
        for (long x = 1; x <= NX; ++x) {
          const double diff = unew[y * W + x] - u[y * W + x];
          sum += diff * diff;
        }
      r.residuals.push_back(std::sqrt(sum));
      const std::size_t c = r.residuals.size() - 1;
      // solve()'s rule: at check c, stop if check c-1 was below the tolerance.
      stop = c >= 1 && p.tol > 0 && r.residuals[c - 1] < p.tol;
    }
    u.swap(unew);
    if (stop) {
      ++it;
      break;
    }
  }
  r.iters_done = it;
  r.field.resize(static_cast<std::size_t>(NX) * NY);
  for (long y = 0; y < NY; ++y)
    for (long x = 0; x < NX; ++x) r.field[y * NX + x] = u[(y + 1) * W + x + 1];
  return r;
}

}  // namespace jacobi
