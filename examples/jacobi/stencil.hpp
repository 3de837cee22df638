// The numerics of the Jacobi example, shared by every implementation (host functions, CUDA
// kernels, the serial reference). Because each one calls these same inline functions, the
// floating-point operations and their order per grid point are identical everywhere: the field
// after N iterations is bitwise the same whatever the decomposition, variant or device.
#pragma once

#if defined(__CUDACC__)
#define JACOBI_HD __host__ __device__
#else
#define JACOBI_HD
#endif

namespace jacobi {

// One Jacobi update of the 5-point Laplace stencil. Written as one multiply of two sums, so no
// compiler can fuse it into an FMA (there is no a*b+c to contract) on the host or the device.
JACOBI_HD inline double update(double north, double south, double west, double east) {
  return 0.25 * ((north + south) + (west + east));
}

// Global grid: NY x NX interior cells, indices 0..NY+1 x 0..NX+1 including the boundary ring.
// Fixed (Dirichlet) boundary values and the initial interior are patterns of the global index
// rather than constants, so a halo written to the wrong place or from the wrong neighbour
// changes the answer instead of hiding behind symmetry.
inline double boundary_value(long gy, long gx) {
  if (gy == 0) return 1.0;  // a hot top edge drives the solution
  return static_cast<double>((gx * 37 + gy * 11) % 101) / 100.0;
}

inline double initial_value(long gy, long gx) {
  return static_cast<double>((gx * 13 + gy * 7) % 29) / 28.0;
}

inline double start_value(long gy, long gx, long NY, long NX) {
  bool edge = gy == 0 || gx == 0 || gy == NY + 1 || gx == NX + 1;
  return edge ? boundary_value(gy, gx) : initial_value(gy, gx);
}

}  // namespace jacobi
