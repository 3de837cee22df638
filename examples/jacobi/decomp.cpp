// Domain decomposition: a non-periodic Cartesian process grid, blocks as even as possible.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "jacobi.hpp"

namespace jacobi {
namespace {

// Part i of n cells split over p processes: the first n % p parts get one more cell.
void split(int n, int p, int i, int *len, int *first) {
  *len = n / p + (i < n % p ? 1 : 0);
  *first = i * (n / p) + std::min(i, n % p);
}

}  // namespace

void check_mpi(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(std::string(what) + " failed: " + msg);
}

const char *variant_name(Variant v) {
  switch (v) {
    case Variant::classic:
      return "classic";
    case Variant::mpix:
      return "mpix";
    default:
      return "partitioned";
  }
}

const char *host_step_name(int step) {
  static const char *const names[kHostSteps] = {"recv",   "pack",   "send",  "wait",
                                                "unpack", "jacobi", "reduce"};
  return step >= 0 && step < kHostSteps ? names[step] : "?";
}

bool parse_variant(const std::string &s, Variant *out) {
  if (s == "classic") *out = Variant::classic;
  else if (s == "mpix") *out = Variant::mpix;
  else if (s == "partitioned") *out = Variant::partitioned;
  else return false;
  return true;
}

Decomp::Decomp(MPI_Comm comm, const Params &p) : NX(p.nx), NY(p.ny) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  dims[0] = p.dims[0];
  dims[1] = p.dims[1];
  check_mpi(MPI_Dims_create(size, 2, dims), "MPI_Dims_create");
  if (dims[0] > NY || dims[1] > NX)
    throw std::runtime_error("grid " + std::to_string(NY) + "x" + std::to_string(NX) +
                             " is smaller than the process grid " + std::to_string(dims[0]) + "x" +
                             std::to_string(dims[1]));
  const int periods[2] = {0, 0};
  // reorder = 0: ranks in the grid are the parent's, so results gather in parent rank order.
  check_mpi(MPI_Cart_create(comm, 2, dims, periods, 0, &cart), "MPI_Cart_create");
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  check_mpi(MPI_Cart_coords(cart, rank, 2, coords), "MPI_Cart_coords");
  // Dimension 0 runs down the rows (north to south), dimension 1 along the columns.
  check_mpi(MPI_Cart_shift(cart, 0, 1, &nbr[kNorth], &nbr[kSouth]), "MPI_Cart_shift");
  check_mpi(MPI_Cart_shift(cart, 1, 1, &nbr[kWest], &nbr[kEast]), "MPI_Cart_shift");
  split(NY, dims[0], coords[0], &ny, &gy0);
  split(NX, dims[1], coords[1], &nx, &gx0);
  gy0 += 1;  // global index 0 is the boundary ring
  gx0 += 1;
}

Decomp::~Decomp() {
  if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
}

SideMask Decomp::have() const {
  SideMask m = 0;
  for (int s = 0; s < 4; ++s)
    if (nbr[s] != MPI_PROC_NULL) m |= 1u << s;
  return m;
}

int Decomp::halo_off(int side) const {
  switch (side) {
    case kNorth:
      return 0;
    case kSouth:
      return nx;
    case kWest:
      return 2 * nx;
    default:
      return 2 * nx + ny;
  }
}

std::vector<double> gather_field(MPI_Comm comm, const Result &r) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine[4] = {r.nx, r.ny, r.gx0, r.gy0};
  std::vector<int> all(rank == 0 ? 4 * size : 0);
  check_mpi(MPI_Gather(mine, 4, MPI_INT, all.data(), 4, MPI_INT, 0, comm), "MPI_Gather");
  std::vector<int> counts(size), displs(size);
  if (rank == 0)
    for (int i = 0, off = 0; i < size; ++i) {
      counts[i] = all[4 * i] * all[4 * i + 1];
      displs[i] = off;
      off += counts[i];
    }
  std::vector<double> blocks(rank == 0 ? static_cast<std::size_t>(r.NX) * r.NY : 0);
  check_mpi(MPI_Gatherv(r.field.data(), r.nx * r.ny, MPI_DOUBLE, blocks.data(), counts.data(),
                        displs.data(), MPI_DOUBLE, 0, comm),
            "MPI_Gatherv");
  if (rank != 0) return {};
  std::vector<double> global(blocks.size());
  for (int i = 0; i < size; ++i) {
    int nx = all[4 * i], ny = all[4 * i + 1], gx0 = all[4 * i + 2], gy0 = all[4 * i + 3];
    for (int y = 0; y < ny; ++y)
      std::copy_n(&blocks[displs[i] + static_cast<std::size_t>(y) * nx], nx,
                  &global[static_cast<std::size_t>(gy0 - 1 + y) * r.NX + (gx0 - 1)]);
  }
  return global;
}

}  // namespace jacobi
