# Which MPI library was found (MPIX_MPI_FLAVOR: openmpi | mpich | other; tests pick launcher
# flags by it), and a refusal of MPI libraries that already have MPICH's stream extension
# (MPICH 4.1+ declares MPIX_Stream_create in mpi.h): mpix's own MPIX_* symbols would clash.
include(CheckSymbolExists)
include(CheckCSourceCompiles)
include(CMakePushCheckState)

cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
set(CMAKE_REQUIRED_QUIET ON)
check_symbol_exists(OMPI_MAJOR_VERSION mpi.h MPIX_MPI_IS_OPENMPI)
check_symbol_exists(MPICH_VERSION mpi.h MPIX_MPI_IS_MPICH)
# Compiled, not linked: the question is what mpi.h declares. (cmake_pop_check_state does not
# restore CMAKE_TRY_COMPILE_TARGET_TYPE: put it back, or enable_language(CUDA)'s own checks,
# later, would try static libraries before CUDA's archiver is set up, and fail.)
set(mpix_saved_try_type "${CMAKE_TRY_COMPILE_TARGET_TYPE}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
check_c_source_compiles("
#include <mpi.h>
int main(void) { return (void (*)(void))MPIX_Stream_create != 0; }" MPIX_MPI_HAS_STREAM_API)
set(CMAKE_TRY_COMPILE_TARGET_TYPE "${mpix_saved_try_type}")
unset(mpix_saved_try_type)
cmake_pop_check_state()

if(MPIX_MPI_HAS_STREAM_API)
  message(FATAL_ERROR
    "mpix: this MPI library already has the MPIX_Stream extension (its mpi.h declares "
    "MPIX_Stream_create: MPICH 4.1 or later). mpix provides the same calls for MPI libraries "
    "that lack them, and its symbols would clash with the library's. Use the library's own "
    "stream API, or build mpix against another MPI (MPI_C_COMPILER / MPI_CXX_COMPILER, e.g. "
    "mpicc.openmpi or an MPICH before 4.1).")
endif()

if(MPIX_MPI_IS_OPENMPI)
  set(MPIX_MPI_FLAVOR openmpi)
elseif(MPIX_MPI_IS_MPICH)
  set(MPIX_MPI_FLAVOR mpich)
else()
  set(MPIX_MPI_FLAVOR other)
endif()
message(STATUS "mpix: MPI library ${MPIX_MPI_FLAVOR} (MPI ${MPI_C_VERSION}), launcher ${MPIEXEC_EXECUTABLE}")
