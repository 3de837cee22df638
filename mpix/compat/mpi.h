/**
 * @file mpix/compat/mpi.h
 * @brief For programs written for MPICH's stream extension, which include <mpi.h> alone and
 * find the MPIX_Stream declarations there: put this folder first on the include path
 * (-I<prefix>/include/mpix/compat; pkg-config --variable=compatdir mpix) and <mpi.h> gives the
 * MPI library's header followed by mpix/mpix.h, so such programs compile unchanged.
 * Uses #include_next (GCC, Clang and compilers compatible with them).
 */
#ifndef MPIX_COMPAT_MPI_H
#define MPIX_COMPAT_MPI_H

#include_next <mpi.h>

#include "../mpix.h"

#endif /* MPIX_COMPAT_MPI_H */
