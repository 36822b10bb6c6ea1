# Runs one command-line tool invocation for CTest: -DCOMMAND="a;b;c" -DEXPECT=success|failure -DREGEX=... [-DWORKDIR=...]
# Fails unless the exit status is as expected and the combined output matches REGEX.
if(NOT DEFINED COMMAND OR NOT DEFINED EXPECT)
  message(FATAL_ERROR "run_tool_test.cmake: -DCOMMAND and -DEXPECT are required")
endif()
if(NOT DEFINED WORKDIR)
  set(WORKDIR "${CMAKE_CURRENT_BINARY_DIR}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_expect_run("${WORKDIR}" "${EXPECT}" "${REGEX}" ${COMMAND})
