#include "base/status.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace mpix {

Status make_status(int mpi_class, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Status(mpi_class, buf);
}

const char *source_file(const char *file) {
  const char *best = nullptr;
  for (const char *top : {"/src/", "/providers/"}) {
    // The last occurrence: a checkout may itself live under a folder named src.
    for (const char *p = std::strstr(file, top); p; p = std::strstr(p + 1, top))
      if (!best || p > best) best = p;
  }
  return best ? best + 1 : file;
}

Status mpi_status(int rc, const char *expr, const char *file, int line) {
  int cls = MPI_ERR_OTHER;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) text[0] = '\0';
  return make_status(cls, "%s failed at %s:%d: %s", expr, source_file(file), line, text);
}

int mpi_error_code(const Status &st) {
  if (st.is_ok()) return MPI_SUCCESS;
  if (st.what().empty()) return st.code();
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return st.code();
  // Codes are never given back (MPI has no call for it), so equal messages share one.
  constexpr std::size_t kMaxCodes = 512;
  static std::mutex mu;
  static auto *codes = new std::unordered_map<std::string, int>;  // class + message -> code
  std::string key = std::to_string(st.code()) + ':' + st.what();
  std::lock_guard<std::mutex> lk(mu);
  auto it = codes->find(key);
  if (it != codes->end()) return it->second;
  if (codes->size() >= kMaxCodes) return st.code();
  int code = 0;
  if (MPI_Add_error_code(st.code(), &code) != MPI_SUCCESS) return st.code();
  std::string text = st.what().substr(0, MPI_MAX_ERROR_STRING - 1);
  if (MPI_Add_error_string(code, text.c_str()) != MPI_SUCCESS) return st.code();
  codes->emplace(std::move(key), code);
  return code;
}

}  // namespace mpix
