// What mpix's MPI_Init / MPI_Init_thread wrappers (src/api/init_api.cpp) asked the MPI library
// for and what they told the caller. mpix's agent thread calls MPI, so the wrappers always ask
// for MPI_THREAD_MULTIPLE; the caller is told the level it asked for (capped by what the library
// gave), so code that branches on `provided` behaves as it did without mpix.
#pragma once

namespace mpix {

// Records one initialisation through the wrappers: @p asked by the caller, @p got from the library.
void thread_level_record(int asked, int got);
// Whether MPI was initialised through the wrappers (false: the application called PMPI_Init*
// itself, or libmpi's MPI_Init won the symbol lookup because libmpix was linked after it).
bool thread_level_wrapped();
// The level the caller was told (valid when thread_level_wrapped()).
int thread_level_reported();
// "MPI_THREAD_SINGLE", ... for messages.
const char *thread_level_name(int level);

}  // namespace mpix
