#pragma once

#include <string>

namespace mpix {

// Bytes in memory order, two lower-case hex digits each.
std::string hex_encode(const void *value, int size);
// The inverse; false if @p text is not exactly 2 * @p size hex digits.
bool hex_decode(const std::string &text, void *value, int size);

}  // namespace mpix
