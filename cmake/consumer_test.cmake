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
