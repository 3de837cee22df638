// libfabric, opened at run time by fabric_dl.cpp.
#pragma once

namespace mpix {

class RuntimeLib;
RuntimeLib &fabric_runtime_lib();

}  // namespace mpix
