// Whether a (count, datatype) can go to libfabric in place: its typemap, walked in typemap
// order, must run through memory in increasing address order without gaps (then the bytes in
// memory order are the bytes in typemap order, which is what MPI sends). A type that merely
// covers its span without gaps is not enough: MPI_Type_indexed({1,1,1},{2,0,1},MPI_INT) covers
// three ints and sends them rotated.
#pragma once

#include <mpi.h>

#include "base/status.hpp"

namespace mpix {

// *in_order: the typemap of @p count elements of @p dt (committed) is one ascending gap-free
// run; then *start is its first byte's offset from the buffer (the true lower bound). Types
// whose constructors are not decoded (subarray is, darray is not) count as not in order, which
// only costs a pack.
Status typemap_in_order(int count, MPI_Datatype dt, bool *in_order, MPI_Aint *start);

}  // namespace mpix
