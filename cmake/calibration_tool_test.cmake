# privpost-calibrate --format json for CTest: runs CALIBRATE with ARGS (a list) in a fresh WORKDIR, stdout to
# report.json, then CHECK (tests/tools/calibration_json_check.cpp) with METHOD (must be calibrated) and CONTROL (the
# negative control, must not be); fails unless both succeed.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(CALIBRATE CHECK WORKDIR METHOD CONTROL)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${CALIBRATE}" ${ARGS} --format json WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc
                OUTPUT_FILE "${WORKDIR}/report.json" ERROR_VARIABLE err)
message("$ ${CALIBRATE} ${ARGS} --format json > report.json\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "expected success, got exit status ${rc}")
endif()
privpost_expect_run("${WORKDIR}" success "\nok\n" "${CHECK}" report.json "${METHOD}" "${CONTROL}")
