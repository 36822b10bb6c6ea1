# Large models are costed before they run (privpost-infer --max-minutes), for CTest:
#   cmake -DRELEASE=... -DINFER=... -DWORKDIR=... -P large_model_tool_test.cmake
# A logistic release of 32 covariates (593 statistics, some 600 parameters) and a 50-column chain of 10
# levels (4900 released cells, seconds a Gibbs-SS sweep) would run for hours without a word. privpost-infer must say the
# estimate at once and refuse the default runs (hours) with it, before any sampling.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(RELEASE INFER WORKDIR)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
function(run expect regex)
  privpost_expect_run("${WORKDIR}" "${expect}" "${regex}" ${ARGN})
endfunction()

# A logistic data set: 32 covariates in [-1, 1] and a 0/1 response, 40 rows (deterministic arithmetic, no RNG).
set(names "")
foreach(j RANGE 1 32)
  list(APPEND names "x${j}")
endforeach()
string(JOIN "," header ${names})
set(text "${header},y\n")
foreach(i RANGE 1 40)
  set(row "")
  foreach(j RANGE 1 32)
    math(EXPR v "(${i} * 37 + ${j} * 11) % 19 - 9")
    if(v LESS 0)
      math(EXPR v "-${v}")
      list(APPEND row "-0.${v}")
    else()
      list(APPEND row "0.${v}")
    endif()
  endforeach()
  math(EXPR y "${i} % 2")
  string(JOIN "," line ${row})
  string(APPEND text "${line},${y}\n")
endforeach()
file(WRITE "${WORKDIR}/wide.csv" "${text}")
run(success "released 593 statistic"
    ${RELEASE} --input wide.csv --model logistic --covariates ${header} --response y --x-bounds -1,1 --epsilon 1 --output wide.json)
run(failure "logistic with 32 covariate\\(s\\): [0-9]+ parameters; one gradient takes .*transitions: about.*the run is estimated at .* over --max-minutes 60: fewer --draws/--burnin/--chains, or raise --max-minutes"
    ${INFER} wide.json)

# A 50-column chain of 10 levels, 60 rows.
set(names "")
set(edges "")
foreach(j RANGE 1 50)
  list(APPEND names "c${j}")
  if(j GREATER 1)
    math(EXPR previous "${j} - 1")
    list(APPEND edges "c${previous}:c${j}")
  endif()
endforeach()
string(JOIN "," header ${names})
string(JOIN "," edge_list ${edges})
set(text "${header}\n")
foreach(i RANGE 1 60)
  set(row "")
  foreach(j RANGE 1 50)
    math(EXPR v "(${i} * 7 + ${j} * 3) % 10")
    list(APPEND row "${v}")
  endforeach()
  string(JOIN "," line ${row})
  string(APPEND text "${line}\n")
endforeach()
file(WRITE "${WORKDIR}/chain.csv" "${text}")
run(success "released 4900 statistic"
    ${RELEASE} --input chain.csv --model pairwise-tables --columns ${header} --levels 0,1,2,3,4,5,6,7,8,9 --edges ${edge_list}
    --epsilon 1 --output chain.json)
run(failure "posterior of 4900 released cells: about .* s a sweep, 18000 sweeps.*the posterior sampling is estimated at .* over --max-minutes 60: --point-estimate"
    ${INFER} chain.json)
