# What keeps a privacy budget whole, end to end (docs/privacy.md, "When a release is decided and charged"):
#   1. whether a release happens is decided from public quantities before the charge: two neighbouring data sets on
#      either side of the lattice mechanisms' capacity are both refused, and neither touches the ledger; with a
#      granularity the bounds allow, both are released;
#   2. one ledger, one identity: charges through a symbolic link, a linked folder and the real path add up; a ledger
#      with two hard links is refused; two concurrent releases through a link and the real path cannot both spend the
#      last of the budget; a link to a missing ledger is refused;
#   3. --output naming the ledger, its lock or the input is refused, and the ledger is kept;
#   4. (options a release does not use: cmake/option_uses_test.cmake, tool_release_option_uses);
#   5. what privpost-infer would refuse, or a quantile noise scale that overflows, is refused before the charge;
#   6. one release given twice (the same file, or a copy) is refused by privpost-infer, naming both files; equal
#      records without an identity are analysed with a warning;
#   8. a stray comma in --budget, a ledger that is not exactly what privpost writes, a killed writer's temporary file,
#      values printed as written.
# -DRELEASE=<privpost-release> -DINFER=<privpost-infer> -DDATA=<tests/tools folder> -DWORKDIR=<scratch directory>
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(RELEASE INFER DATA WORKDIR)
set(dir "${WORKDIR}")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(records "${DATA}/records.csv")
set(base ${RELEASE} --input ${records} --column sick --model binomial)
function(expect_run expect regex)
  privpost_expect_run("${dir}" "${expect}" "${regex}" ${ARGN})
endfunction()
function(expect_absent)
  foreach(f IN LISTS ARGN)
    if(EXISTS "${dir}/${f}")
      message(FATAL_ERROR "'${f}' exists: a refused release wrote it")
    endif()
  endforeach()
endfunction()

# 1. A neighbouring pair at the lattice mechanisms' capacity: 17,593 records of 10^12 against 17,592 and one 0, at
#    granularity 1000. Their sums are 1.7593e13 and 1.7592e13 lattice units, one on each side of 2^44 (1.759219e13):
#    a refusal decided by the sum released one and refused the other after charging it. The bounds [0, 1e12] let any
#    data set of that n reach 1.7593e13 units, so both are refused before the charge, and neither touches the ledger.
string(REPEAT "1000000000000\n" 17592 big)
file(WRITE "${dir}/over.csv" "x\n${big}1000000000000\n")
file(WRITE "${dir}/under.csv" "x\n${big}0\n")
foreach(set over under)
  expect_run(failure "--granularity 1000: the statistics of n = 17593 records within the declared bounds reach 1.7593e\\+16.*accepted: --granularity at least"
    ${RELEASE} --input ${set}.csv --column x --model exponential --lower 0 --upper 1e12 --mechanism discrete-laplace
    --granularity 1000 --epsilon 1 --ledger lattice-${set}.json --budget 1 --output lattice-${set}.out.json)
  expect_absent(lattice-${set}.json lattice-${set}.out.json)
  # A granularity the public bounds allow: both released.
  expect_run(success "released 1 statistic"
    ${RELEASE} --input ${set}.csv --column x --model exponential --lower 0 --upper 1e12 --mechanism discrete-laplace
    --granularity 2000 --epsilon 1 --output coarse-${set}.json)
endforeach()
# Incomes in cents: 200,000 records up to 10^6 at granularity 0.01 can reach 2e13 lattice units: refused whatever the
# records are, before the charge.
string(REPEAT "0\n" 200000 zeros)
file(WRITE "${dir}/cents.csv" "x\n${zeros}")
expect_run(failure "--granularity 0.01: .*accepted: --granularity at least 0.0113"
  ${RELEASE} --input cents.csv --column x --model exponential --lower 0 --upper 1e6 --mechanism discrete-laplace
  --granularity 0.01 --epsilon 1 --ledger cents-ledger.json --budget 1 --output cents.json)
expect_absent(cents-ledger.json cents.json)

# 2. Links. The ledger lives in real/; link.json is a symbolic link to it, linked/ a symbolic link to the folder.
file(MAKE_DIRECTORY "${dir}/real")
file(CREATE_LINK "real/ledger.json" "${dir}/link.json" SYMBOLIC)
file(CREATE_LINK "real" "${dir}/linked" SYMBOLIC)
expect_run(success "spent \\(epsilon 0.3, delta 0\\)" ${base} --epsilon 0.3 --ledger real/ledger.json --budget 1 --output l1.json)
expect_run(success "spent \\(epsilon 0.6, delta 0\\)" ${base} --epsilon 0.3 --ledger link.json --output l2.json)
expect_run(success "spent \\(epsilon 0.9, delta 0\\)" ${base} --epsilon 0.3 --ledger linked/ledger.json --output l3.json)
expect_run(failure "over the privacy budget" ${base} --epsilon 0.3 --ledger real/ledger.json --output l4.json)
expect_absent(l4.json)
if(NOT IS_SYMLINK "${dir}/link.json")
  message(FATAL_ERROR "a release through a symbolic link replaced the link by a file")
endif()
privpost_ledger_entries("${dir}/real/ledger.json" n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "the ledger records ${n} entries after three charges through three names (expected 3)")
endif()
if(EXISTS "${dir}/link.json.lock" OR NOT EXISTS "${dir}/real/ledger.json.lock")
  message(FATAL_ERROR "the lock is not the real path's alone (a lock beside the link, or none beside the ledger)")
endif()
# A hard link: refused from either name, and nothing charged.
file(CREATE_LINK "${dir}/real/ledger.json" "${dir}/hard.json")
expect_run(failure "has 2 hard links; accepted: a ledger with one name" ${base} --epsilon 0.01 --ledger hard.json --output h.json)
expect_run(failure "has 2 hard links" ${base} --epsilon 0.01 --ledger real/ledger.json --output h.json)
file(REMOVE "${dir}/hard.json")
expect_absent(h.json)
# A link to a missing ledger would create a ledger where nobody looks: refused.
file(CREATE_LINK "nowhere/ledger.json" "${dir}/dangling.json" SYMBOLIC)
expect_run(failure "is a symbolic link to a missing file" ${base} --epsilon 0.1 --ledger dangling.json --budget 1 --output d.json)
# Two concurrent releases through a link and the real path: 0.2 of 1 spent, two of 0.5 race, exactly one may pass.
foreach(round RANGE 1 3)
  file(MAKE_DIRECTORY "${dir}/race${round}")
  file(CREATE_LINK "race${round}/ledger.json" "${dir}/race${round}.link" SYMBOLIC)
  expect_run(success "charged" ${base} --epsilon 0.2 --ledger race${round}/ledger.json --budget 1 --output r0.json)
  set(ENV{PRIVPOST_LEDGER_HOLD_MS} 300)
  execute_process(
    COMMAND ${base} --epsilon 0.5 --ledger race${round}.link --output r1.json
    COMMAND ${base} --epsilon 0.5 --ledger race${round}/ledger.json --output r2.json
    WORKING_DIRECTORY "${dir}" RESULTS_VARIABLE rcs ERROR_VARIABLE err)
  unset(ENV{PRIVPOST_LEDGER_HOLD_MS})
  message("round ${round} (a link and the real path): exit statuses ${rcs}\n${err}")
  list(FILTER rcs INCLUDE REGEX "^0$")
  list(LENGTH rcs successes)
  if(NOT successes EQUAL 1)
    message(FATAL_ERROR "round ${round}: ${successes} of two concurrent releases through a link and the real path passed")
  endif()
  privpost_ledger_entries("${dir}/race${round}/ledger.json" n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "round ${round}: the ledger records ${n} entries (expected 2)")
  endif()
endforeach()

# 3. --output naming what the release reads or keeps: refused, the ledger kept whole.
expect_run(success "charged" ${base} --epsilon 0.1 --ledger out.json --budget 1 --output o0.json)
expect_run(failure "--output 'out.json' is the ledger \\(--ledger\\)" ${base} --epsilon 0.1 --ledger out.json --output out.json)
expect_run(failure "is the ledger \\(--ledger\\)" ${base} --epsilon 0.1 --ledger out.json --output ./out.json)
expect_run(failure "is the ledger's lock file" ${base} --epsilon 0.1 --ledger out.json --output out.json.lock)
file(COPY_FILE "${records}" "${dir}/input.csv")
file(CREATE_LINK "input.csv" "${dir}/input-link.csv" SYMBOLIC)
expect_run(failure "is the records \\(--input\\)" ${RELEASE} --input input.csv --column sick --model binomial --epsilon 0.1
  --output input-link.csv)
file(READ "${dir}/input.csv" copied)
file(READ "${records}" original)
if(NOT copied STREQUAL original)
  message(FATAL_ERROR "a refused --output changed the input")
endif()
privpost_ledger_entries("${dir}/out.json" n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "the ledger records ${n} entries after refused outputs (expected 1)")
endif()

# 5. Refusals decided before the charge: a quantile noise scale that overflows, what privpost-infer refuses.
set(lr ${RELEASE} --input ${DATA}/regression.csv --model linreg --covariates x1,x2 --response y --x-bounds -1,1 --y-bounds -3,3)
expect_run(failure "--bound-max 1e\\+308: the quantiles' noise scale .* is not finite.*nothing was charged"
  ${lr} --partitions 4 --quantiles 0.5 --bound-base 1e308 --bound-max 1e308 --epsilon 1 --ledger p.json --budget 2 --output p.out.json)
set(cutoffs "0")
foreach(k RANGE 1 1000)
  string(APPEND cutoffs ",${k}")
endforeach()
expect_run(failure "privpost-infer would refuse this partition release .*1 to 1000.*nothing was charged"
  ${lr} --partitions 4 --cutoffs ${cutoffs} --epsilon 1 --ledger p.json --budget 2 --output p.out.json)
# 1023 marginal tables of a 2^10 table (privpost-infer reads at most 1000).
set(header "c0")
set(row "0")
set(columns "c0")
foreach(k RANGE 1 9)
  string(APPEND header ",c${k}")
  string(APPEND row ",1")
  string(APPEND columns ",c${k}")
endforeach()
file(WRITE "${dir}/table.csv" "${header}\n${row}\n${row}\n")
set(tables "")
foreach(mask RANGE 1 1023)
  set(table "")
  foreach(k RANGE 0 9)
    math(EXPR bit "(${mask} >> ${k}) & 1")
    if(bit)
      if(table STREQUAL "")
        set(table "c${k}")
      else()
        string(APPEND table ":c${k}")
      endif()
    endif()
  endforeach()
  list(APPEND tables "${table}")
endforeach()
string(REPLACE ";" "," tables "${tables}")
expect_run(failure "privpost-infer would refuse this release .*marginals tables: accepted 1 to 1000.*nothing was charged"
  ${RELEASE} --input table.csv --model marginals --columns ${columns} --levels 0,1 --marginals ${tables} --epsilon 1
  --ledger p.json --budget 2 --output p.out.json)
expect_absent(p.json p.out.json)

# 6. One release twice: a marginals release (the model whose releases privpost-infer analyses jointly) given twice, or
#    with a copy of it, would be analysed as two releases with their noise counted twice.
set(marginals ${RELEASE} --input ${records} --model marginals --columns sick,answer --levels 0,1,2 --marginals sick,answer,sick:answer)
expect_run(success "released 15 statistic" ${marginals} --epsilon 0.5 --output m1.json)
file(COPY_FILE "${dir}/m1.json" "${dir}/m1-copy.json")
expect_run(failure "'m1.json' and 'm1.json' are the same release \\(release_id [0-9a-f]+\\)" ${INFER} m1.json m1.json)
expect_run(failure "'m1.json' and 'm1-copy.json' are the same release" ${INFER} m1.json m1-copy.json)
file(READ "${dir}/m1.json" text)
string(JSON id GET "${text}" release_id)
if(NOT id MATCHES "^[0-9a-f]+$")
  message(FATAL_ERROR "the release record's release_id is '${id}'")
endif()
string(LENGTH "${id}" length)
if(NOT length EQUAL 32)
  message(FATAL_ERROR "the release_id '${id}' has ${length} hex digits (expected 32)")
endif()
expect_run(success "released 15 statistic" ${marginals} --epsilon 0.5 --output m2.json)
file(READ "${dir}/m2.json" text2)
string(JSON id2 GET "${text2}" release_id)
if(id2 STREQUAL id)
  message(FATAL_ERROR "two releases drew the same release_id ${id}")
endif()
string(JSON old REMOVE "${text}" release_id)
file(WRITE "${dir}/old.json" "${old}")
execute_process(COMMAND ${INFER} old.json old.json --chains 2 --draws 100 --burnin 50 WORKING_DIRECTORY "${dir}"
                ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT err MATCHES "warning: 'old.json' and 'old.json' are equal records without a release_id")
  message(FATAL_ERROR "equal records without a release_id: no warning\n${err}")
endif()
# Two releases of the same records are two releases: analysed jointly, without a word.
execute_process(COMMAND ${INFER} m1.json m2.json --chains 2 --draws 100 --burnin 50 WORKING_DIRECTORY "${dir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0 OR err MATCHES "same release|release_id")
  message(FATAL_ERROR "two distinct releases were not analysed jointly (exit status ${rc})\n${err}")
endif()
string(JSON bad SET "${text}" release_id "\"not-hex\"")
file(WRITE "${dir}/bad-id.json" "${bad}")
expect_run(failure "field 'release_id' is not 32 lowercase hex digits" ${INFER} bad-id.json)

# 8. Smaller ones.
expect_run(failure "--budget is '1,,0.5': an empty item" ${base} --epsilon 0.1 --ledger new.json --budget 1,,0.5)
expect_run(failure "--budget is '1,': an empty item" ${base} --epsilon 0.1 --ledger new.json --budget 1,)
expect_absent(new.json)
expect_run(failure "--budget 0.3,0 differs from the total \\(1, 0\\)" ${base} --epsilon 0.1 --ledger out.json --budget 0.3)
# Every refusal leads with the option or field at fault, not with the library function or "the declared bounds".
expect_run(failure "^privpost-release: error: --budget: total epsilon is inf" ${base} --epsilon 0.1 --ledger new.json --budget inf)
expect_run(failure "^privpost-release: error: --epsilon: epsilon is nan" ${base} --epsilon nan --output e.json)
expect_run(failure "^privpost-release: error: --delta: delta is 0; accepted: a number in \\(0, 1\\)"
  ${base} --epsilon 1 --mechanism gaussian --delta 0 --output e.json)
expect_run(failure "^privpost-release: error: --partitions 1000: partitions is 1000; accepted: at most"
  ${lr} --partitions 1000 --cutoffs 0 --epsilon 1 --output e.json)
string(JSON tiny SET "${text}" mechanism epsilon "1e-300")
file(WRITE "${dir}/tiny.json" "${tiny}")
expect_run(failure "^privpost-infer: error: release record: mechanism field 'epsilon' is 1e-300; accepted: a finite number >= 2\\^-50"
  ${INFER} tiny.json)
# A ledger that is not exactly what privpost writes is an error, never a smaller or fresh ledger.
file(READ "${dir}/out.json" ledger_text)
foreach(edit "entries;null" "entries;{}" "spent;null" "total;[1,0]" "format;\"privpost-ledger-2\"")
  list(GET edit 0 key)
  list(GET edit 1 value)
  string(JSON edited SET "${ledger_text}" ${key} "${value}")
  file(WRITE "${dir}/edited.json" "${edited}")
  expect_run(failure "edited.json" ${base} --epsilon 0.1 --ledger edited.json --output e.json)
endforeach()
string(JSON edited SET "${ledger_text}" extra "1")
file(WRITE "${dir}/edited.json" "${edited}")
expect_run(failure "has the unknown field 'extra'" ${base} --epsilon 0.1 --ledger edited.json --output e.json)
string(JSON edited SET "${ledger_text}" spent epsilon "0.01")
file(WRITE "${dir}/edited.json" "${edited}")
expect_run(failure "records a spend of \\(0.01, 0\\) but its entries compose to \\(0.1, 0\\)" ${base} --epsilon 0.1 --ledger edited.json --output e.json)
string(JSON edited REMOVE "${ledger_text}" entries 0 time)
file(WRITE "${dir}/edited.json" "${edited}")
expect_run(failure "entry 1 has no field 'time'" ${base} --epsilon 0.1 --ledger edited.json --output e.json)
expect_absent(e.json)
# A writer killed before its rename left its temporary file: the next release (under the lock) removes it.
file(WRITE "${dir}/out.json.privpost-tmp.AbC123" "{\"half\": ")
expect_run(success "charged" ${base} --epsilon 0.1 --ledger out.json --output o1.json)
if(EXISTS "${dir}/out.json.privpost-tmp.AbC123")
  message(FATAL_ERROR "a killed writer's temporary file was left beside the ledger")
endif()
