# Every option a tool's run does not use is refused, naming it, before anything is read, charged or run: one case per
# (run, unused option) pair, generated from the tool's own table (`TOOL --option-uses`, examples/tools/option_table.hpp).
# -DTOOL=<privpost-release|privpost-calibrate> -DARGS=<arguments every case gets, ';'-separated> -DMIN=<fewest cases>
# -DNOTHING=<the refusal's last words> -DWORKDIR=<scratch directory>
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(TOOL ARGS MIN NOTHING WORKDIR)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND ${TOOL} --option-uses RESULT_VARIABLE rc OUTPUT_VARIABLE cases ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} --option-uses failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" cases "${cases}")
list(FILTER cases EXCLUDE REGEX "^$")
list(LENGTH cases count)
if(count LESS MIN)
  message(FATAL_ERROR "${TOOL} --option-uses gave ${count} cases (at least ${MIN} expected: one per unused option and run)")
endif()
foreach(case IN LISTS cases)
  separate_arguments(args UNIX_COMMAND "${case}")
  string(REGEX MATCH "--[a-z-]+ [^ ]*$|--[a-z-]+$" tail "${case}")  # the option under test comes last
  string(REGEX MATCH "^--[a-z-]+" flag "${tail}")
  execute_process(COMMAND ${TOOL} ${ARGS} ${args} WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc ERROR_VARIABLE err
                  OUTPUT_QUIET)
  if(rc EQUAL 0 OR NOT err MATCHES "error: ${flag} does not apply to this [a-z]+ \\([^)]*\\): it applies to .*; ${NOTHING}")
    message(FATAL_ERROR "'${case}': expected '${flag} does not apply', got exit status ${rc}: ${err}")
  endif()
endforeach()
file(GLOB left "${WORKDIR}/*")
if(left)
  message(FATAL_ERROR "refused runs left files: ${left}")
endif()
message("${TOOL}: ${count} refusals, each before anything was read, charged or run")
