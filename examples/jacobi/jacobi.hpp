// A 2D Jacobi solver for the Laplace equation with halo exchange, in three variants from one
// source (solver.cpp): "classic" MPI (synchronise the stream, MPI_Isend/MPI_Irecv/MPI_Waitall on
// the host), "mpix" (the stream itself sends, receives and reduces; the host never waits
// inside the loop) and "partitioned" (as mpix, but persistent partitioned requests set up once,
// whose send partitions the pack kernel marks ready). docs/migrating.md walks through the
// differences.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "device.hpp"

namespace jacobi {

enum class Variant { classic, mpix, partitioned };
const char *variant_name(Variant v);
bool parse_variant(const std::string &s, Variant *out);

struct Params {
  int nx = 64, ny = 64;  // global interior size (columns, rows)
  int dims[2] = {0, 0};  // process grid {rows, columns}; 0: MPI_Dims_create chooses
  int iters = 100;       // iterations at most
  int check_every = 10;  // K: global residual every K iterations
  double tol = 0;        // stop once a residual is below tol (0: run all iterations)
  int warmup = 0;        // untimed iterations before the timed ones (benchmarks)
  Variant variant = Variant::mpix;
  // Halo buffers in page-locked host memory that the kernels write and read directly (GPU
  // devices), instead of device memory: no staging copies in any variant.
  bool host_halos = false;
  // partitioned: send partitions per halo at most; each side uses the largest count that
  // divides its halo length (partitions are equal-sized).
  int partitions = 1;
};

// This rank's block of the global grid, on a Cartesian communicator.
class Decomp {
 public:
  // Collective over @p comm. Throws std::runtime_error if the grid has fewer cells per
  // direction than processes.
  Decomp(MPI_Comm comm, const Params &p);
  ~Decomp();
  Decomp(const Decomp &) = delete;
  Decomp &operator=(const Decomp &) = delete;

  MPI_Comm cart = MPI_COMM_NULL;  // non-periodic 2D grid, ranks as in the parent
  int dims[2] = {0, 0}, coords[2] = {0, 0};
  int nbr[4] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};  // by Side
  int nx = 0, ny = 0;                                                         // local interior
  int gx0 = 0, gy0 = 0;  // global index of local interior cell (1, 1)
  int NX = 0, NY = 0;    // global interior

  SideMask have() const;
  // Halo length of a side and its offset in the packed [N | S | W | E] buffers.
  int halo_len(int side) const { return side < 2 ? nx : ny; }
  int halo_off(int side) const;
  int halo_total() const { return 2 * (nx + ny); }
};

struct Result {
  int iters_done = 0;
  std::vector<double> residuals;  // global L2 residual ||u_new - u|| at each check
  std::vector<double> field;      // local interior, ny x nx, row-major
  int nx = 0, ny = 0, gx0 = 0, gy0 = 0, NX = 0, NY = 0;
  double seconds = 0;  // timed iterations (after warmup), slowest rank
  int timed_iters = 0;
  // Of the timed part, this rank's host thread: time in the loop (enqueueing, or for classic
  // everything), and of that, time blocked waiting for a residual (mpix's one-check-back wait).
  double host_loop_seconds = 0, host_wait_seconds = 0;
  // Of the timed part, this rank's host thread per step of an iteration (HostStep order):
  // where the busy time goes, e.g. which enqueue call is slow.
  double host_step_seconds[7] = {0, 0, 0, 0, 0, 0, 0};
};

// The steps host_step_seconds counts: the receives posted (MPI_Irecv, MPIX_Irecv_enqueue,
// MPIX_Startall_enqueue), the pack kernel launched (classic: with its copy out and the
// synchronisation), the sends, the wait (MPI_Waitall, MPIX_Waitall_enqueue,
// MPIX_Pwaitall_enqueue), the unpack (classic: with its copy in), the Jacobi update, the
// residual and its reduction (less the mpix variants' wait for an older one).
enum HostStep { kStepRecv, kStepPack, kStepSend, kStepWait, kStepUnpack, kStepJacobi, kStepReduce };
constexpr int kHostSteps = 7;
const char *host_step_name(int step);

// The packed halo buffers MPI sends from and receives into. A caller that runs the solver
// several times at one size passes the same HaloBuffers to each solve(), as a real code keeps
// its arrays for its whole run: the messages then use the same allocations every time (so
// mpix's per-allocation mappings stay valid, rather than each run finding a freed buffer's
// address reused). solve() allocates what is missing or of another size or kind.
struct HaloBuffers {
  Buffer send, recv;      // [N | S | W | E], compute memory (or page-locked host: host_halos)
  Buffer send_h, recv_h;  // classic only: host copies when compute memory is not host memory
};

// Runs the solver; collective over @p comm. Errors (MPI or mpix return codes) throw
// std::runtime_error naming the call. @p keep: halo buffers kept across calls (see
// HaloBuffers); null: allocated for this call and freed at its end.
Result solve(MPI_Comm comm, const Params &p, Device &dev, HaloBuffers *keep = nullptr);

// Rank 0 of @p comm gets the global interior (NY x NX); other ranks get an empty vector.
std::vector<double> gather_field(MPI_Comm comm, const Result &r);

// The same iteration and stopping rule on one process, one global array.
struct Reference {
  int iters_done = 0;
  std::vector<double> residuals;
  std::vector<double> field;  // NY x NX interior
};
Reference reference(const Params &p);

// Throws std::runtime_error("<what> failed: <MPI error string>") if rc != MPI_SUCCESS.
void check_mpi(int rc, const char *what);

}  // namespace jacobi
