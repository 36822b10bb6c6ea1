# Fails when a C++ file of the repository is not formatted by .clang-format (clang-format 14, Debian's clang-format-14;
# other versions lay out some constructs differently, so the check insists on 14).
# Run: cmake -DSOURCE_DIR=<repo> -DCLANG_FORMAT=<clang-format-14> -P cmake/format_check.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT CLANG_FORMAT)
  message(FATAL_ERROR "pass -DSOURCE_DIR=<repository root> -DCLANG_FORMAT=<clang-format 14>")
endif()
file(GLOB_RECURSE files "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/tests/*.hpp" "${SOURCE_DIR}/tests/*.cpp"
     "${SOURCE_DIR}/examples/*.hpp" "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/benchmarks/*.cpp")
list(FILTER files EXCLUDE REGEX "/layering_fixture/")
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror --style=file ${files}
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
list(LENGTH files n)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clang-format: files not formatted (fix with clang-format -i FILE):\n${err}")
endif()
message(STATUS "format: ${n} files formatted by .clang-format")
