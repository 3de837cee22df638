// Which bytes of a (buffer, count, datatype) an MPI call really reads or writes: the typemap as
// a short list of strided runs, relative to the buffer's true lower bound. Staging copies device
// buffers block by block with it (core/staging/), so that a receive into a strided datatype
// never writes the gaps between its blocks and a send never reads them.
//
// The runs are derived from the datatype's constructors (MPI_Type_get_envelope / _contents):
// vector-like constructors stay one run however many blocks they have, and a count of elements
// multiplies runs instead of copying them. Constructors not decoded here (darray, Fortran types,
// named types with holes such as MPI_SHORT_INT) fall back to the byte-mask method: pack a buffer
// of 0xFF bytes, unpack it into a zeroed one, and read the blocks off the result.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "base/copy_run.hpp"
#include "base/status.hpp"

namespace mpix {

struct TypeLayout {
  std::ptrdiff_t lb = 0;      // the span starts at buf + lb (the true lower bound)
  std::size_t span = 0;       // bytes from the true lower bound to the true upper bound
  std::vector<CopyRun> runs;  // the bytes the typemap covers, offsets from the span's start;
                              // empty when it covers the whole span
  bool dense() const { return runs.empty(); }
};

// The layout of @p count elements of @p dt (committed). Fails with MPI_ERR_TYPE for a negative
// extent, which staging cannot address.
Status typemap_layout(int count, MPI_Datatype dt, TypeLayout *out);

// The same by the byte-mask method only: time and memory grow with the span rather than with
// the number of runs. The reference typemap_layout is checked against (test/unit).
Status typemap_layout_by_mask(int count, MPI_Datatype dt, TypeLayout *out);

}  // namespace mpix
