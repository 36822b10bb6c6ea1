# CTest privpost_self_contained: fails if any CMake file, preset, script or C++ source of the repository refers to the
# folder beside the repository that the developers keep their papers and data in. A clone must build, test and run
# its examples on its own: data sets live in examples/data/.
# Usage: cmake -DSOURCE_DIR=<repository> -P self_contained_check.cmake
cmake_minimum_required(VERSION 3.25)  # GLOB_RECURSE does not follow symbolic links (CMP0009)
set(beside "..")
string(APPEND beside "/shared")  # built in two pieces so that this file does not match itself
# The top files by name, then the source folders recursively (not the build trees, which the docs tests fill with
# links back to the build tree).
file(GLOB top RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/CMakeLists.txt" "${SOURCE_DIR}/CMakePresets.json")
file(GLOB_RECURSE candidates RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/.ci/*" "${SOURCE_DIR}/cmake/*"
  "${SOURCE_DIR}/include/*" "${SOURCE_DIR}/tests/*" "${SOURCE_DIR}/examples/*" "${SOURCE_DIR}/benchmarks/*")
list(APPEND candidates ${top})
set(found "")
foreach(f IN LISTS candidates)
  if(f MATCHES "\\.(cpp|hpp|h|cmake|txt|json|sh|in)$" OR f MATCHES "^\\.ci/")
    file(READ "${SOURCE_DIR}/${f}" text)
    string(FIND "${text}" "${beside}" at)
    if(NOT at EQUAL -1)
      list(APPEND found "${f}")
    endif()
  endif()
endforeach()
list(LENGTH candidates count)
if(found)
  message(FATAL_ERROR "these files refer to ${beside}, outside the repository: ${found}")
endif()
message(STATUS "self-contained: ${count} files checked, none refers to ${beside}")
