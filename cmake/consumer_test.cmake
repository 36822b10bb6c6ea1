# Builds tests/consumer against privpost twice: through find_package after `cmake --install` into a scratch prefix,
# and through add_subdirectory of the source tree. Run by CTest as `cmake -P`; fails on the first error.
foreach(var PRIVPOST_SOURCE_DIR PRIVPOST_BINARY_DIR WORK_DIR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${PRIVPOST_BINARY_DIR}" --prefix "${prefix}")

# Every public header installed, unchanged: the installed tree must hold exactly the files of include/, byte for byte.
# This names a header the install left out (also one the umbrella header does not include) in no time, where compiling
# the umbrella header from the install costs as much as a test program's headers; the consumer then needs two headers.
file(GLOB_RECURSE source_headers RELATIVE "${PRIVPOST_SOURCE_DIR}/include" "${PRIVPOST_SOURCE_DIR}/include/*")
file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
list(SORT source_headers)
list(SORT installed_headers)
if(NOT source_headers STREQUAL installed_headers)
  set(missing ${source_headers})
  list(REMOVE_ITEM missing ${installed_headers})
  set(extra ${installed_headers})
  list(REMOVE_ITEM extra ${source_headers})
  message(FATAL_ERROR "installed headers differ from include/: not installed [${missing}], not in include/ [${extra}]")
endif()
foreach(header IN LISTS source_headers)
  file(SHA256 "${PRIVPOST_SOURCE_DIR}/include/${header}" expected)
  file(SHA256 "${prefix}/include/${header}" actual)
  if(NOT expected STREQUAL actual)
    message(FATAL_ERROR "installed ${header} differs from include/${header}")
  endif()
endforeach()
list(LENGTH source_headers count)
message(STATUS "installed headers: the ${count} files of include/")

foreach(mode find_package add_subdirectory)
  set(build "${WORK_DIR}/build-${mode}")
  run("${CMAKE_COMMAND}" -S "${PRIVPOST_SOURCE_DIR}/tests/consumer" -B "${build}"
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      -DCONSUMER_MODE=${mode}
      -DCMAKE_PREFIX_PATH=${prefix}
      -DPRIVPOST_SOURCE_DIR=${PRIVPOST_SOURCE_DIR})
  run("${CMAKE_COMMAND}" --build "${build}")
  run("${build}/consumer")
  message(STATUS "consumer via ${mode}: ok")
endforeach()
