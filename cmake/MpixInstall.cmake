# Installation: headers, libmpix, mpix_info, a CMake package (find_package(mpix) ->
# mpix::mpix) and a pkg-config file (pkg-config --cflags --libs mpix).
include(CMakePackageConfigHelpers)

install(TARGETS mpix EXPORT mpixTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS mpix_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/mpix/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpix
  FILES_MATCHING PATTERN "*.h")

install(EXPORT mpixTargets NAMESPACE mpix:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mpixConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mpixConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mpixConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mpixConfig.cmake ${PROJECT_BINARY_DIR}/mpixConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpix)

configure_file(${PROJECT_SOURCE_DIR}/cmake/mpix.pc.in ${PROJECT_BINARY_DIR}/mpix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mpix.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
