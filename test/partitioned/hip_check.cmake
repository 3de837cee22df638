# mpix_device.h in HIP device code: a compile-only check (no AMD GPU here), run as a test so
# that CI reports it. Needs clang with HIP support and the HIP headers (Debian: clang,
# libamdhip64-dev).
find_program(MPIX_CLANGXX NAMES clang++)
find_path(MPIX_HIP_RUNTIME_H hip/hip_runtime.h PATHS /opt/rocm/include)
if(MPIX_CLANGXX AND MPIX_HIP_RUNTIME_H)
  set(incs -I${PROJECT_SOURCE_DIR} -I${MPIX_HIP_RUNTIME_H})
  foreach(d ${MPI_CXX_INCLUDE_DIRS})
    list(APPEND incs -I${d})
  endforeach()
  add_test(NAME device_header_hip_compile
    COMMAND ${MPIX_CLANGXX} -x hip --offload-arch=gfx90a -nogpulib -nogpuinc -fsyntax-only
            -Wall -Wextra -Werror ${incs} ${CMAKE_CURRENT_SOURCE_DIR}/device_header_hip_check.hip)
  set_tests_properties(device_header_hip_compile PROPERTIES LABELS "unit;hip")
else()
  message(STATUS "mpix: no clang++ with HIP headers: mpix_device.h is not compile-checked for HIP")
endif()
