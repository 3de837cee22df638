// libamdhip64, opened at run time by hip_runtime_dl.cpp.
#pragma once

namespace mpix {

class RuntimeLib;
RuntimeLib &hip_runtime_lib();

}  // namespace mpix
