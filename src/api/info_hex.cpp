// MPIX_Info_set_hex: a binary value (a stream handle) as hex text in an MPI_Info.
#include "api/info_hex.hpp"

#include <string>

#include "api/errors.hpp"
#include "mpix/mpix.h"

namespace mpix {

std::string hex_encode(const void *value, int size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(static_cast<std::size_t>(size) * 2);
  auto *b = static_cast<const unsigned char *>(value);
  for (int i = 0; i < size; ++i) {
    s.push_back(kDigits[b[i] >> 4]);
    s.push_back(kDigits[b[i] & 15]);
  }
  return s;
}

bool hex_decode(const std::string &text, void *value, int size) {
  if (text.size() != static_cast<std::size_t>(size) * 2) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  auto *b = static_cast<unsigned char *>(value);
  for (int i = 0; i < size; ++i) {
    int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    b[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

}  // namespace mpix

extern "C" int MPIX_Info_set_hex(MPI_Info info, const char *key, const void *value,
                                 int value_size) {
  using namespace mpix;
  return api_guard("MPIX_Info_set_hex", [&]() -> int {
    Status st;
    if (info == MPI_INFO_NULL) st = make_status(MPI_ERR_INFO, "info is MPI_INFO_NULL");
    else if (!key) st = make_status(MPI_ERR_ARG, "key is NULL");
    else if (!value) st = make_status(MPI_ERR_ARG, "value is NULL");
    else if (value_size <= 0)
      st = make_status(MPI_ERR_ARG, "value_size %d is not positive", value_size);
    if (st.is_ok()) {
      std::string hex = hex_encode(value, value_size);
      int rc = MPI_Info_set(info, key, hex.c_str());
      if (rc != MPI_SUCCESS) st = mpi_status(rc, "MPI_Info_set", __FILE__, __LINE__);
    }
    return finish(MPI_COMM_NULL, "MPIX_Info_set_hex", st);
  });
}
