# privpost-infer --format json for CTest: runs INFER on RECORD with ARGS (a list) in a fresh
# WORKDIR, stdout to summary.json and --draws-csv draws.csv, then CHECK (tests/tools/summary_json_check.cpp) compares
# the two; fails unless both succeed, stderr holds the tables, and the check's output matches REGEX.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(INFER CHECK RECORD WORKDIR REGEX)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${INFER}" "${RECORD}" ${ARGS} --format json --draws-csv draws.csv WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_FILE "${WORKDIR}/summary.json" ERROR_VARIABLE err)
message("$ ${INFER} ${RECORD} ${ARGS} --format json --draws-csv draws.csv > summary.json\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "expected success, got exit status ${rc}")
endif()
if(NOT err MATCHES "R-hat")
  message(FATAL_ERROR "the tables did not go to stderr")
endif()
privpost_expect_run("${WORKDIR}" success "${REGEX}" "${CHECK}" summary.json draws.csv)
