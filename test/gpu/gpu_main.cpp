// main() for the multi-rank GPU tests: MPI with MPI_THREAD_MULTIPLE, one GPU per rank (local
// rank modulo the devices), mpix's and the tests' kernels loaded eagerly, then the Catch2
// session on every rank. Without a usable CUDA device on every rank it prints why and exits
// with 77, which CTest reports as skipped (SKIP_RETURN_CODE).
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "catch.hpp"
#include "test_kernels.hpp"
#include "watchdog.hpp"

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // MPIX_TEST_GPU_DIRECT_OFF_RANK=r: rank r turns GPU-direct off (its pairs take the staged
  // path), before mpix reads its settings at its first call.
  if (const char *off = std::getenv("MPIX_TEST_GPU_DIRECT_OFF_RANK"))
    if (std::atoi(off) == rank) setenv("MPIX_GPU_DIRECT", "off", 1);

  int ndev = 0;
  cudaError_t rc = cudaGetDeviceCount(&ndev);
  if (rc != cudaSuccess) ndev = 0;
  int fewest = 0;
  MPI_Allreduce(&ndev, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    if (ndev == 0)
      std::printf("SKIP: rank %d has no usable CUDA device (%s)\n", rank,
                  rc != cudaSuccess ? cudaGetErrorString(rc) : "none found");
    std::fflush(stdout);
    MPI_Finalize();
    return 77;
  }
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  cudaSetDevice(local % ndev);
  if (mpix_gpu_test::load_test_kernels() != cudaSuccess) {
    std::fprintf(stderr, "rank %d: loading the test kernels failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  // MPIX_TEST_WATCHDOG_S (CTest sets it below its own timeout): a hang ends with the rank and
  // the last stage named instead of a silent timeout.
  mpix_gpu_test::Watchdog dog(mpix_gpu_test::Watchdog::seconds_from_env("MPIX_TEST_WATCHDOG_S", 0),
                              rank);
  Catch::Session session;
  int result = session.applyCommandLine(argc, argv);
  // Stop at the first failure and take every rank down with it: the peers of a failed rank
  // would otherwise wait forever in the test's next collective or stream wait.
  session.configData().abortAfter = 1;
  if (result == 0) result = session.run();
  if (result != 0) {
    std::fprintf(stderr, "rank %d: test failed; aborting all ranks\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dog.disarm();
  MPI_Finalize();
  return worst ? 1 : 0;
}
