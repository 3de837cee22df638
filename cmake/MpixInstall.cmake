# Installation: headers, libmpix, mpix_info, a CMake package (find_package(mpix) ->
# mpix::mpix) and a pkg-config file (pkg-config --cflags --libs mpix).
include(CMakePackageConfigHelpers)

# Installed binaries find the non-system libraries they were linked with (an MPI in /opt, ...).
set_target_properties(mpix mpix_info PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS mpix EXPORT mpixTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS mpix_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/mpix/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpix
  FILES_MATCHING PATTERN "*.h")

install(EXPORT mpixTargets NAMESPACE mpix:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)
# mpixConfig.cmake finds the MPI mpix was built with (these compiler wrappers) by default.
set(MPIX_BUILT_MPI_C_COMPILER "${MPI_C_COMPILER}")
set(MPIX_BUILT_MPI_CXX_COMPILER "${MPI_CXX_COMPILER}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mpixConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mpixConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mpixConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mpixConfig.cmake ${PROJECT_BINARY_DIR}/mpixConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)

# pkg-config: prefix relative to the .pc file's directory (${pcfiledir}), unless the install
# directories are absolute; MPI's flags as FindMPI found them (absolute: MPI is not relocated).
set(_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MPIX_PC_PREFIX_FROM_PCDIR "")
  set(MPIX_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(MPIX_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH MPIX_PC_PREFIX_FROM_PCDIR "/mpix-prefix/${_pcdir}" "/mpix-prefix")
  string(REGEX REPLACE "/$" "" MPIX_PC_PREFIX_FROM_PCDIR "${MPIX_PC_PREFIX_FROM_PCDIR}")
  set(MPIX_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(MPIX_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(MPIX_PC_MPI_CFLAGS "")
foreach(d IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND MPIX_PC_MPI_CFLAGS " -I${d}")
endforeach()
foreach(d IN LISTS MPI_C_COMPILE_DEFINITIONS)
  string(APPEND MPIX_PC_MPI_CFLAGS " -D${d}")
endforeach()
foreach(o IN LISTS MPI_C_COMPILE_OPTIONS)
  string(APPEND MPIX_PC_MPI_CFLAGS " ${o}")
endforeach()
string(STRIP "${MPIX_PC_MPI_CFLAGS}" MPIX_PC_MPI_CFLAGS)
# The C++ bindings' library too (Open MPI's mpi.h pulls its C++ bindings into C++ code); a C
# program that does not need it loses nothing (or, under --as-needed, the entry).
set(_mpi_libs ${MPI_CXX_LIBRARIES} ${MPI_C_LIBRARIES})
list(REMOVE_DUPLICATES _mpi_libs)
string(REPLACE ";" " " MPIX_PC_MPI_LIBS "${MPI_C_LINK_FLAGS};${_mpi_libs}")
string(STRIP "${MPIX_PC_MPI_LIBS}" MPIX_PC_MPI_LIBS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/mpix.pc.in ${PROJECT_BINARY_DIR}/mpix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mpix.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
