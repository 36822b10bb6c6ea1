# The privacy budget ledger of privpost-release (--ledger, --budget), end to end:
#   1. a new ledger needs --budget; the first release creates it, and the release record carries the ledger's state;
#   2. releases are charged until the total is reached; the one over it is refused with a clear message, writes no
#      release record and leaves the ledger unchanged;
#   3. two processes releasing at once against one ledger cannot both spend the last of the budget: each round starts
#      with 0.2 of 1 spent, and two releases of 0.5 race (PRIVPOST_LEDGER_HOLD_MS keeps the lock 300 ms after a charge,
#      so the two overlap); exactly one may succeed and the ledger must record exactly two entries. Without the file
#      lock both would read 0.2 and both succeed;
#   4. bad input: --budget without --ledger, a malformed budget, a total out of range, a budget that differs from the
#      ledger's, a file that is not a ledger, a ledger whose entries exceed its total.
# -DRELEASE=<privpost-release> -DDATA=<records.csv> -DWORKDIR=<scratch directory>
if(NOT DEFINED RELEASE OR NOT DEFINED DATA OR NOT DEFINED WORKDIR)
  message(FATAL_ERROR "ledger_tool_test.cmake: -DRELEASE, -DDATA and -DWORKDIR are required")
endif()
set(dir "${WORKDIR}/ledger_test")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(ledger "${dir}/ledger.json")
set(base ${RELEASE} --input ${DATA} --column sick --model binomial)

include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
function(expect_run expect regex)
  privpost_expect_run("${dir}" "${expect}" "${regex}" ${ARGN})
endfunction()


# 1. Creation.
expect_run(failure "is a new ledger: give the data set's total budget with --budget" ${base} --epsilon 0.5 --ledger ${ledger} --output a.json)
expect_run(success "charged to the ledger '.*ledger.json': spent \\(epsilon 0.4, delta 0\\) of the total \\(epsilon 1, delta 0\\)"
  ${base} --epsilon 0.4 --ledger ${ledger} --budget 1 --output a.json)
file(READ "${dir}/a.json" record)
string(JSON spent GET "${record}" ledger spent epsilon)
string(JSON entries GET "${record}" ledger entries)
if(NOT spent EQUAL 0.4 OR NOT entries EQUAL 1)
  message(FATAL_ERROR "the release record's ledger field is wrong: ${record}")
endif()

# 2. Up to the total, then refused (the budget is taken from the file).
expect_run(success "spent \\(epsilon 1, delta 0\\)" ${base} --epsilon 0.6 --ledger ${ledger} --output b.json)
expect_run(failure "over the privacy budget of the ledger .*asks for \\(epsilon 0.1, delta 0\\).*refused before any noise was drawn; nothing was released"
  ${base} --epsilon 0.1 --ledger ${ledger} --output c.json)
if(EXISTS "${dir}/c.json")
  message(FATAL_ERROR "a refused release wrote a release record")
endif()
privpost_ledger_entries("${ledger}" n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "the refused release changed the ledger (${n} entries)")
endif()
# A Gaussian release against a total with delta 0 is refused too.
expect_run(failure "over the privacy budget" ${base} --epsilon 0.01 --mechanism gaussian --delta 1e-9 --ledger ${ledger} --output c.json)

# 3. Two concurrent releases (execute_process runs the commands of a pipeline at the same time).
foreach(round RANGE 1 3)
  set(race "${dir}/race${round}.json")
  expect_run(success "charged" ${base} --epsilon 0.2 --ledger ${race} --budget 1 --output r0.json)
  file(REMOVE "${dir}/r1.json" "${dir}/r2.json")
  set(ENV{PRIVPOST_LEDGER_HOLD_MS} 300)
  execute_process(
    COMMAND ${base} --epsilon 0.5 --ledger ${race} --output r1.json
    COMMAND ${base} --epsilon 0.5 --ledger ${race} --output r2.json
    WORKING_DIRECTORY "${dir}" RESULTS_VARIABLE rcs OUTPUT_VARIABLE out ERROR_VARIABLE err)
  unset(ENV{PRIVPOST_LEDGER_HOLD_MS})
  message("round ${round}: exit statuses ${rcs}\n${err}")
  set(successes 0)
  foreach(rc IN LISTS rcs)
    if(rc EQUAL 0)
      math(EXPR successes "${successes} + 1")
    endif()
  endforeach()
  if(NOT successes EQUAL 1)
    message(FATAL_ERROR "round ${round}: ${successes} of the two concurrent releases succeeded (exactly 1 may)")
  endif()
  if(NOT err MATCHES "over the privacy budget")
    message(FATAL_ERROR "round ${round}: the refused release did not say why")
  endif()
  privpost_ledger_entries("${race}" n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "round ${round}: the ledger records ${n} entries (expected 2)")
  endif()
endforeach()

# 4. Bad input.
expect_run(failure "--budget needs --ledger" ${base} --epsilon 0.1 --budget 1 --output d.json)
expect_run(failure "--budget is 'one'; accepted: EPSILON or EPSILON,DELTA" ${base} --epsilon 0.1 --ledger new.json --budget one)
expect_run(failure "total epsilon is nan" ${base} --epsilon 0.1 --ledger new.json --budget nan)
expect_run(failure "delta is 1; accepted: a number in \\[0, 1\\)" ${base} --epsilon 0.1 --ledger new.json --budget 1,1)
expect_run(failure "differs from the total" ${base} --epsilon 0.1 --ledger ${ledger} --budget 2 --output d.json)
file(WRITE "${dir}/broken.json" "{\"format\": \"privpost-ledger-1\", \"total\": ")
expect_run(failure "is not a ledger" ${base} --epsilon 0.1 --ledger broken.json --output d.json)
file(WRITE "${dir}/over.json" "{\"format\": \"privpost-ledger-1\", \"total\": {\"epsilon\": 1, \"delta\": 0}, \"entries\": [{\"label\": \"x\", \"epsilon\": 2, \"delta\": 0, \"rho\": 2, \"time\": \"2026-12-01T00:00:00Z\"}], \"spent\": {\"epsilon\": 2, \"delta\": 0}}")
expect_run(failure "records more than its total" ${base} --epsilon 0.1 --ledger over.json --output d.json)
if(EXISTS "${dir}/d.json")
  message(FATAL_ERROR "a refused release wrote a release record")
endif()

# 5. A ledger is never lost nor taken for a new one: an empty file, a device, an oversized file are refused, even with
#    --budget (an empty ledger read as new once admitted 0.9 after 0.3 of 1 had been charged).
file(WRITE "${dir}/empty.json" "")
expect_run(failure "is empty: a ledger always records its total.*not read as a new ledger"
  ${base} --epsilon 0.1 --ledger empty.json --budget 1 --output d.json)
expect_run(failure "'/dev/zero' is not a regular file" ${base} --epsilon 0.1 --ledger /dev/zero --budget 1 --output d.json)
string(REPEAT "x" 1048576 mebibyte)
file(WRITE "${dir}/huge.json" "")
foreach(i RANGE 1 17)
  file(APPEND "${dir}/huge.json" "${mebibyte}")
endforeach()
expect_run(failure "huge.json' has 17825792 bytes; accepted: a ledger of at most 16777216 bytes"
  ${base} --epsilon 0.1 --ledger huge.json --budget 1 --output d.json)
file(REMOVE "${dir}/huge.json")
if(EXISTS "${dir}/d.json")
  message(FATAL_ERROR "a refused release wrote a release record")
endif()
# The ledger is replaced whole: no temporary file is left, the lock file stays beside it.
file(GLOB leftovers "${ledger}.*")
if(NOT leftovers STREQUAL "${ledger}.lock")
  message(FATAL_ERROR "after the charges, beside the ledger: '${leftovers}' (expected only '${ledger}.lock')")
endif()

# 6. The record's output: an unwritable path is refused before anything is charged; a record lost after the charge
#    (/dev/full) exits with status 3 and names the charged entry; never exit 0 without the record written.
expect_run(success "charged" ${base} --epsilon 0.1 --ledger out.json --budget 1 --output e.json)
expect_run(failure "cannot create a file beside '${dir}/no/such/folder/e.json'.*No such file or directory"
  ${base} --epsilon 0.1 --ledger out.json --output ${dir}/no/such/folder/e.json)
privpost_ledger_entries("${dir}/out.json" n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "an unwritable --output was charged to the ledger (${n} entries, expected 1)")
endif()
execute_process(COMMAND ${base} --epsilon 0.1 --ledger out.json --output /dev/full WORKING_DIRECTORY "${dir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
message("$ --output /dev/full: exit status ${rc}\n${err}")
if(NOT rc EQUAL 3 OR NOT err MATCHES "could not be written to '/dev/full'.*No space left on device.*WAS CHARGED to the ledger '.*out.json': entry 2 \\(")
  message(FATAL_ERROR "--output /dev/full: expected exit status 3 and the charged entry named")
endif()
# Without a ledger nothing is charged, and the failure says that nothing was released.
expect_run(failure "could not be written to '/dev/full'.*nothing was released" ${base} --epsilon 0.1 --output /dev/full)
execute_process(COMMAND sh -c "\"$0\" \"$@\" > /dev/full" ${base} --epsilon 0.1 WORKING_DIRECTORY "${dir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "could not be written to standard output")
  message(FATAL_ERROR "standard output on /dev/full: exit status ${rc}, ${err}")
endif()
