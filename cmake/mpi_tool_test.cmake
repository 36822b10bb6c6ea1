# The command-line tools under mpiexec (CTest, with MPI only). -DCASE=release|bad-shard|calibrate|infer, -DMPIEXEC=...,
# -DRELEASE=, -DCALIBRATE=, -DINFER= (the tools), -DWORKDIR=, -DSOURCE_DIR=.
#   release:   three shards of uneven sizes (one with records outside the bounds, one empty) released by 1, 2 and 3
#              ranks: n is the concatenated data's, and at epsilon 10^7 (Laplace scale 2 10^-6) the noisy sum is the
#              exact sum of the admitted records to 10^-4 (the bits themselves: tests/distributed/mpi_test.cpp).
#   bad-shard: a shard with a text cell ends every rank with its message, and no record is written.
#   calibrate: the trials over 2 ranks give the single-process table (every field but the seconds).
#   infer:     the chains over 2 ranks give the single-process draws (the CSV files are equal), also extended in
#              rounds by --target-ess.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(CASE MPIEXEC WORKDIR)
file(MAKE_DIRECTORY "${WORKDIR}")

function(write_shards)
  # 17 records: shard 0 has 11 (two above the upper bound 20: dropped), shard 1 none, shard 2 has 6.
  file(WRITE "${WORKDIR}/shard-0.csv" "id,count\n1,3\n2,7\n3,25\n4,0\n5,12\n6,19\n7,20\n8,31\n9,1\n10,4\n11,9\n")
  file(WRITE "${WORKDIR}/shard-1.csv" "id,count\n")
  file(WRITE "${WORKDIR}/shard-2.csv" "id,count\n12,5\n13,5\n14,17\n15,2\n16,8\n17,11\n")
  # The admitted records sum to 3+7+0+12+19+20+1+4+9 + 5+5+17+2+8+11 = 123.
endfunction()

# The record's n and first noisy statistic.
function(read_release path n_out z_out)
  file(READ "${path}" json)
  string(JSON n GET "${json}" n)
  string(JSON z GET "${json}" noisy_statistics 0)
  set(${n_out} "${n}" PARENT_SCOPE)
  set(${z_out} "${z}" PARENT_SCOPE)
endfunction()

if(CASE STREQUAL "release")
  privpost_require_defined(RELEASE)
  write_shards()
  foreach(ranks 1 2 3)
    if(ranks EQUAL 1)
      # One process reads the concatenation (no {rank}).
      file(READ "${WORKDIR}/shard-0.csv" a)
      file(READ "${WORKDIR}/shard-2.csv" c)
      string(REGEX REPLACE "^id,count\n" "" c "${c}")
      file(WRITE "${WORKDIR}/all.csv" "${a}${c}")
      set(command "${RELEASE}" --input all.csv)
    else()
      # 2 ranks: shards 0 and 1 (11 records); 3 ranks: all three.
      set(command "${MPIEXEC}" -n ${ranks} "${RELEASE}" --input "shard-{rank}.csv")
    endif()
    file(REMOVE "${WORKDIR}/r${ranks}.json")
    privpost_expect_run("${WORKDIR}" success "released" ${command} --column count --model poisson --lower 0 --upper 20
                        --epsilon 1e7 --output r${ranks}.json)
    read_release("${WORKDIR}/r${ranks}.json" n z)
    if(ranks EQUAL 2)
      set(expected_n 11)
      set(expected 75)
    else()
      set(expected_n 17)
      set(expected 123)
    endif()
    math(EXPR below "${expected} - 1")
    if(NOT n MATCHES "^${expected_n}(\\.0)?$")
      message(FATAL_ERROR "${ranks} rank(s): n is ${n}, expected ${expected_n}")
    endif()
    if(NOT z MATCHES "^(${expected}\\.0000|${below}\\.9999)")
      message(FATAL_ERROR "${ranks} rank(s): the noisy sum is ${z}, expected ${expected} within 1e-4")
    endif()
  endforeach()
  # Shards may be empty, but not all of them.
  file(WRITE "${WORKDIR}/none-0.csv" "id,count\n")
  file(WRITE "${WORKDIR}/none-1.csv" "id,count\n")
  privpost_expect_run("${WORKDIR}" failure "every rank's shard is empty" "${MPIEXEC}" -n 2 "${RELEASE}" --input "none-{rank}.csv"
                      --column count --model poisson --lower 0 --upper 20 --epsilon 1 --output none.json)
  # Without a launcher, a {rank} path is refused; under one, a path without {rank} too.
  privpost_expect_run("${WORKDIR}" failure "start the release with mpirun" "${RELEASE}" --input "shard-{rank}.csv" --column count
                      --model poisson --lower 0 --upper 20 --epsilon 1)
  privpost_expect_run("${WORKDIR}" failure "every rank would read the same records" "${MPIEXEC}" -n 2 "${RELEASE}" --input all.csv
                      --column count --model poisson --lower 0 --upper 20 --epsilon 1 --output same.json)
  # Under a launcher the record goes to a file: standard output passes through the launcher, which reports no failed
  # write (a record lost to a full disk there exited 0 with its charge kept).
  privpost_expect_run("${WORKDIR}" failure "under mpirun the release record is written to a file" "${MPIEXEC}" -n 2
                      "${RELEASE}" --input "shard-{rank}.csv" --column count --model poisson --lower 0 --upper 20 --epsilon 1)
  # A record lost after its charge on the writing rank: the job's exit status is 3, the charged entry named.
  file(REMOVE "${WORKDIR}/lost-ledger.json")
  execute_process(COMMAND "${MPIEXEC}" -n 2 "${RELEASE}" --input "shard-{rank}.csv" --column count --model poisson
                          --lower 0 --upper 20 --epsilon 1 --ledger lost-ledger.json --budget 2 --output /dev/full
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ mpiexec -n 2 privpost-release ... --output /dev/full: exit status ${rc}\n${err}")
  if(NOT rc EQUAL 3 OR NOT err MATCHES "WAS CHARGED to the ledger 'lost-ledger.json': entry 1 \\(")
    message(FATAL_ERROR "a record lost under mpiexec after its charge: expected exit status 3 and the entry named")
  endif()
elseif(CASE STREQUAL "bad-shard")
  privpost_require_defined(RELEASE)
  write_shards()
  file(WRITE "${WORKDIR}/shard-1.csv" "id,count\n18,4\n19,many\n")
  file(REMOVE "${WORKDIR}/bad.json")
  privpost_expect_run("${WORKDIR}" failure "rank 1 failed.*many" "${MPIEXEC}" -n 3 "${RELEASE}" --input "shard-{rank}.csv"
                      --column count --model poisson --lower 0 --upper 20 --epsilon 1 --output bad.json)
  if(EXISTS "${WORKDIR}/bad.json")
    message(FATAL_ERROR "a release record was written although a shard failed")
  endif()
elseif(CASE STREQUAL "calibrate")
  privpost_require_defined(CALIBRATE)
  set(study --model binomial --n 40 --epsilon 0.5 --trials 7 --draws 60 --burnin 30 --thin 1 --seed 4 --format json)
  privpost_expect_run("${WORKDIR}" success "coverage90" "${CALIBRATE}" ${study})
  execute_process(COMMAND "${CALIBRATE}" ${study} WORKING_DIRECTORY "${WORKDIR}" OUTPUT_VARIABLE single RESULT_VARIABLE rc1)
  execute_process(COMMAND "${MPIEXEC}" -n 2 "${CALIBRATE}" ${study} WORKING_DIRECTORY "${WORKDIR}" OUTPUT_VARIABLE spread
                  RESULT_VARIABLE rc2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "privpost-calibrate failed: exit status ${rc1} alone, ${rc2} on 2 ranks\n${spread}")
  endif()
  # Every field but the measured seconds.
  string(REGEX REPLACE "\"seconds_per_posterior\": [^,}\n]*" "" single "${single}")
  string(REGEX REPLACE "\"seconds_per_posterior\": [^,}\n]*" "" spread "${spread}")
  if(NOT single STREQUAL spread)
    message(FATAL_ERROR "the 2-rank table differs from the single-process table:\n${single}\n---\n${spread}")
  endif()
  message("the 2-rank table equals the single-process table:\n${spread}")
elseif(CASE STREQUAL "infer")
  privpost_require_defined(INFER SOURCE_DIR)
  set(run "${SOURCE_DIR}/tests/tools/binomial_release.json" --chains 3 --draws 200 --burnin 100 --seed 8)
  file(REMOVE "${WORKDIR}/single.csv" "${WORKDIR}/spread.csv")
  privpost_expect_run("${WORKDIR}" success "theta" "${INFER}" ${run} --draws-csv single.csv)
  privpost_expect_run("${WORKDIR}" success "theta" "${MPIEXEC}" -n 2 "${INFER}" ${run} --draws-csv spread.csv)
  file(READ "${WORKDIR}/single.csv" a)
  file(READ "${WORKDIR}/spread.csv" b)
  if(NOT a STREQUAL b OR a STREQUAL "")
    message(FATAL_ERROR "the draws of 2 ranks differ from the single-process draws")
  endif()
  message("the 2-rank draws equal the single-process draws (${WORKDIR}/spread.csv)")
  # --target-ess extends the chains in rounds: the root checks the target, every rank runs the same rounds.
  file(REMOVE "${WORKDIR}/single_until.csv" "${WORKDIR}/spread_until.csv")
  set(extended "--target-ess 2000: reached after [0-9]+ sweeps per chain \\([2-9] rounds")
  privpost_expect_run("${WORKDIR}" success "${extended}" "${INFER}" ${run} --target-ess 2000 --draws-csv single_until.csv)
  privpost_expect_run("${WORKDIR}" success "${extended}" "${MPIEXEC}" -n 2 "${INFER}" ${run} --target-ess 2000
                      --draws-csv spread_until.csv)
  file(READ "${WORKDIR}/single_until.csv" a)
  file(READ "${WORKDIR}/spread_until.csv" b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "with --target-ess the draws of 2 ranks differ from the single-process draws")
  endif()
  message("with --target-ess the 2-rank draws equal the single-process draws (${WORKDIR}/spread_until.csv)")
else()
  message(FATAL_ERROR "mpi_tool_test.cmake: unknown -DCASE=${CASE}")
endif()
