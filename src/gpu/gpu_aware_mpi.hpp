// Whether device buffers go to the MPI library as they are (a CUDA-aware MPI reads and writes
// device memory itself) or through mpix's pinned bounce buffers (staged).
//
// The decision is a pure function of the setting MPIX_CUDA_AWARE, what the MPI library says
// when asked at run time, and the stream backend, so that it is unit-tested without a GPU or a
// CUDA-aware MPI (test/unit/gpu_aware_mpi_test.cpp). The query resolves the libraries' own
// calls by name at run time, so mpix builds against any MPI:
//   Open MPI  MPIX_Query_cuda_support()            (mpi-ext.h, extension "cuda")
//   MPICH     MPIX_GPU_query_support(CUDA=0, &ok)  (MPICH 4.0+; also MPIX_Query_cuda_support)
// Only provider mpi hands device buffers to MPI; other providers keep their own rule.
#pragma once

#include <string>

#include "gpu/backend.hpp"

namespace mpix {

enum class AwareSetting { automatic, on, off };
// What the MPI library answered: not asked / no query call found, yes, no.
enum class AwareQuery { unknown, yes, no };

struct AwareChoice {
  bool direct = false;  // true: device buffers go to MPI unstaged
  std::string why;      // one line for mpix_info and the log
};

// Parses MPIX_CUDA_AWARE's value (auto | on | off, also 1/0, true/false, yes/no); false if the
// value is none of these.
bool parse_aware_setting(const char *value, AwareSetting *out);

// The decision for device buffers of streams of backend @p kind. Host streams have none to
// decide about (direct = false leaves staging's own rules alone); HIP streams stay staged (no
// HIP-aware MPI query is made, and the path was never run).
AwareChoice aware_choose(AwareSetting setting, AwareQuery query, StreamKind kind);

// Asks the MPI library (after MPI_Init) whether it reads CUDA device memory, and how it said.
AwareQuery aware_query_cuda(std::string *how);

// The process's decision for @p kind, made once (setting read, library asked) and logged.
const AwareChoice &aware_choice(StreamKind kind);

}  // namespace mpix
