// mpix_info: what this build of mpix has and how it is configured (like fi_info / ompi_info).
// Prints the build, the stream backends and providers built and found, and every MPIX_*
// setting with its value, default and help text. Runs with or without mpirun.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "base/runtime_lib.hpp"
#include "base/settings.hpp"
#include "core/provider.hpp"
#include "gpu/backend.hpp"
#include "gpu/gpu_aware_mpi.hpp"
#include "mpix/mpix.h"
#ifdef MPIX_HAVE_HIP
#include "gpu/hip/hip_dl.hpp"
#endif
#ifdef MPIX_HAVE_OFI
#include "providers/ofi/fabric_dl.hpp"
#endif

using namespace mpix;

int main(int argc, char **argv) {
  bool settings_only = argc > 1 && std::strcmp(argv[1], "--settings") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (!settings_only) {
    std::printf("mpix %d.%d\n", MPIX_VERSION_MAJOR, MPIX_VERSION_MINOR);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(lib, &len);
    const char *nl = std::strchr(lib, '\n');
    std::printf("  MPI library:        %.*s\n", nl ? static_cast<int>(nl - lib) : len, lib);
    std::printf("  MPI thread level:   %s\n",
                provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "less than MULTIPLE");
    std::printf("  backends built:     %s\n", backends_built());
    for (StreamKind k : {StreamKind::host, StreamKind::cuda, StreamKind::hip}) {
      Backend *b = nullptr;
      Status st = backend_get(k, &b);
      std::printf("    %-16s %s\n", stream_kind_name(k),
                  st.is_ok() ? b->describe().c_str() : st.what().c_str());
    }
    // Optional libraries libmpix opens at run time instead of linking them.
    std::printf("  opened at run time:%s\n",
#if defined(MPIX_HAVE_HIP) || defined(MPIX_HAVE_OFI)
                ""
#else
                " none in this build"
#endif
    );
#ifdef MPIX_HAVE_HIP
    std::printf("    %s\n", hip_runtime_lib().describe().c_str());
#endif
#ifdef MPIX_HAVE_OFI
    std::printf("    %s\n", fabric_runtime_lib().describe().c_str());
#endif
    std::printf("  providers built:    %s\n", providers_built());
    // Chosen here as the Runtime would (mpix_info makes no Runtime: a bad MPIX_* value must not
    // keep it from listing the settings).
    std::unique_ptr<Provider> p;
    std::string why;
    Status st = provider_choose(&p, &why);
    if (st.is_ok()) {
      std::printf("  provider chosen:    %s\n", p->name());
      std::printf("    why:              %s\n", why.c_str());
      std::printf("    %s\n", p->describe().c_str());
    } else {
      std::printf("  provider chosen:    none: %s\n", st.what().c_str());
    }
    // Only provider mpi hands buffers to the MPI library; the decision is what it would do.
    std::printf("  CUDA device buffers to MPI: %s\n", aware_choice(StreamKind::cuda).why.c_str());
  }
  std::printf("settings (environment variables):\n");
  // Base's table, then every other folder's (each registered when libmpix loads).
  for (const SettingTable *t : setting_tables())
    for (std::size_t i = 0; i < t->size(); ++i) {
      const SettingInfo &info = t->info(i);
      std::printf("  %-20s = %-10s (default %s; takes %s)\n      %s\n", info.name, t->str(i),
                  info.default_value, t->takes(i).c_str(), info.help);
      Status st = t->parse(i, t->str(i), nullptr);
      if (!st.is_ok()) std::printf("      ERROR: %s\n", st.what().c_str());
    }
  MPI_Finalize();
  return 0;
}
