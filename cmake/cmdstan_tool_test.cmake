# privpost-infer --output-dir for CTest: runs INFER on RECORD with ARGS (a list), writing both
# --draws-csv and --output-dir into a fresh WORKDIR, then CHECK (tests/tools/cmdstan_csv_check.cpp) compares the two;
# fails unless both succeed and the check's output matches REGEX.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(INFER CHECK RECORD WORKDIR REGEX)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
privpost_expect_run("${WORKDIR}" success "wrote [0-9]+ CmdStan CSV files to out" "${INFER}" "${RECORD}" ${ARGS} --draws-csv draws.csv
                    --output-dir out)
privpost_expect_run("${WORKDIR}" success "${REGEX}" "${CHECK}" draws.csv out)
