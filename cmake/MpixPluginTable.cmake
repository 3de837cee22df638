# mpix_plugin_table(<MACRO> <FILE> <name>...): writes the generated list of one plug-in axis
# (providers/provider_entry.hpp, src/gpu/backend_entry.hpp), one "<MACRO>(<name>)" line per
# plug-in built, into ${CMAKE_CURRENT_BINARY_DIR}/generated/<FILE>, which mpix_objects includes.
function(mpix_plugin_table macro file)
  set(table "")
  foreach(name IN LISTS ARGN)
    string(APPEND table "${macro}(${name})\n")
  endforeach()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/${file} CONTENT "${table}")
  target_include_directories(mpix_objects PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()
