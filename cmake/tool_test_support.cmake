# Shared by the CMake-script tool tests (run_tool_test, ledger_tool_test, discrete_tool_test, cmdstan_tool_test,
# summary_json_tool_test, plot_tool_test .cmake):
# privpost_expect_run(WORKDIR success|failure REGEX command...) runs the command in WORKDIR, prints it and its output,
# and fails unless the exit status is as expected and the combined output matches REGEX.
function(privpost_expect_run workdir expect regex)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${workdir}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ ${ARGN}\n${out}${err}")
  if(expect STREQUAL "success" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "expected success, got exit status ${rc}")
  elseif(expect STREQUAL "failure" AND rc EQUAL 0)
    message(FATAL_ERROR "expected a non-zero exit status")
  endif()
  if(NOT "${out}${err}" MATCHES "${regex}")
    message(FATAL_ERROR "output does not match '${regex}'")
  endif()
endfunction()

# privpost_require_defined(NAME...) fails the calling script unless each -DNAME=... was given.
function(privpost_require_defined)
  foreach(v IN LISTS ARGN)
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: -D${v} is required")
    endif()
  endforeach()
endfunction()

# privpost_ledger_entries(FILE OUT) sets OUT to the number of entries of the ledger FILE.
function(privpost_ledger_entries file out)
  file(READ "${file}" text)
  string(JSON n LENGTH "${text}" entries)
  set(${out} ${n} PARENT_SCOPE)
endfunction()
