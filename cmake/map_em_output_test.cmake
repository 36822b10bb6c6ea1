# privpost-infer's MAP-EM result for scripts, for CTest: runs INFER on RECORD (a pairwise-tables release) with
# --point-estimate --compare-naive --format json --output-dir tables in a fresh WORKDIR and checks the JSON document on
# stdout (point_estimates: both estimators, their iterations, convergence and E-step events, every column's fitted
# marginal as a probability, the edge tables' rows, the settings' evidence) and DIR/point_estimates.csv (its header and
# ROWS data rows); then, on LAPLACE_RECORD (a Laplace release on a forest), --map-em-evidence exact and gaussian are said
# in the settings, a bad value is refused, and with the posterior its mean is a point estimate in both outputs.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(INFER RECORD LAPLACE_RECORD WORKDIR ROWS)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${INFER}" "${RECORD}" --point-estimate --compare-naive --format json --output-dir tables
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("$ ${INFER} ${RECORD} --point-estimate --compare-naive --format json --output-dir tables\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "expected success, got exit status ${rc}")
endif()
string(JSON estimates LENGTH "${out}" point_estimates)
if(NOT estimates EQUAL 2)
  message(FATAL_ERROR "point_estimates has ${estimates} entries, expected 2 (cgm-map-em, naive-mle):\n${out}")
endif()
string(JSON method GET "${out}" point_estimates 0 method)
string(JSON naive GET "${out}" point_estimates 1 method)
string(JSON converged GET "${out}" point_estimates 0 converged)
string(JSON iterations GET "${out}" point_estimates 0 iterations)
string(JSON floors GET "${out}" point_estimates 0 events log_floors)
if(NOT method STREQUAL "cgm-map-em" OR NOT naive STREQUAL "naive-mle" OR NOT converged STREQUAL "ON" OR iterations LESS 1
   OR floors STREQUAL "")
  message(FATAL_ERROR "point_estimates: method '${method}', '${naive}', converged '${converged}', iterations "
                      "'${iterations}', log_floors '${floors}'")
endif()
string(JSON democrat GET "${out}" point_estimates 0 node_marginals Class democrat)
if(NOT democrat MATCHES "^0\\.[0-9]+" OR NOT democrat GREATER 0.5 OR NOT democrat LESS 0.7)
  message(FATAL_ERROR "Class=democrat fitted at '${democrat}', expected a probability near the data's 0.61")
endif()
string(JSON edges LENGTH "${out}" point_estimates 0 edge_marginals)
string(JSON rows LENGTH "${out}" point_estimates 0 edge_marginals 0 probabilities)
if(edges LESS 1 OR NOT rows EQUAL 2)
  message(FATAL_ERROR "edge_marginals: ${edges} edges, the first with ${rows} rows (expected Class's 2 levels)")
endif()
file(STRINGS "${WORKDIR}/tables/point_estimates.csv" lines)
list(LENGTH lines count)
list(GET lines 0 header)
math(EXPR data_rows "${count} - 1")
if(NOT header STREQUAL "method,columns,levels,probability,expected_count" OR NOT data_rows EQUAL ROWS)
  message(FATAL_ERROR "point_estimates.csv: header '${header}', ${data_rows} data rows (expected ${ROWS})")
endif()
string(JSON evidence GET "${out}" point_estimate_settings evidence)
string(JSON accelerated GET "${out}" point_estimate_settings accelerated)
if(NOT evidence STREQUAL "Gaussian evidence" OR NOT accelerated STREQUAL "ON")
  message(FATAL_ERROR "point_estimate_settings: evidence '${evidence}', accelerated '${accelerated}'")
endif()
foreach(choice exact gaussian)
  execute_process(COMMAND "${INFER}" "${LAPLACE_RECORD}" --point-estimate --format json --map-em-evidence ${choice}
                  WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--map-em-evidence ${choice}: exit status ${rc}\n${err}")
  endif()
  string(JSON said GET "${out}" point_estimate_settings evidence)
  set(expected "Laplace evidence")
  if(choice STREQUAL "gaussian")
    set(expected "Gaussian surrogate of the Laplace evidence")
  endif()
  if(NOT said STREQUAL expected)
    message(FATAL_ERROR "--map-em-evidence ${choice}: the settings say '${said}', expected '${expected}'")
  endif()
endforeach()
execute_process(COMMAND "${INFER}" "${LAPLACE_RECORD}" --point-estimate --map-em-evidence median WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "map-em-evidence")
  message(FATAL_ERROR "--map-em-evidence median: expected a refusal naming the option, got exit status ${rc}\n${err}")
endif()
# With the posterior (LAPLACE_RECORD's graph is a forest): its mean is a third estimate, after MAP-EM's, in the JSON
# (largest R-hat, converged, marginals) and in point_estimates.csv (2 x 38 rows: node cells 2 + 4 x 3, edge cells
# 4 x 6), which is written once the posterior is in.
execute_process(COMMAND "${INFER}" "${LAPLACE_RECORD}" --format json --output-dir posterior --draws 200 --burnin 200 --seed 5
                WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the posterior with --format json --output-dir: exit status ${rc}\n${err}")
endif()
string(JSON estimates LENGTH "${out}" point_estimates)
string(JSON last GET "${out}" point_estimates 1 method)
string(JSON rhat GET "${out}" point_estimates 1 largest_rhat)
string(JSON converged GET "${out}" point_estimates 1 converged)
string(JSON democrat_mean GET "${out}" point_estimates 1 node_marginals Class democrat)
# MAP-EM against the posterior mean: cells beyond 3 Monte Carlo standard errors (of 24 edge cells), the excess squared
# error and the mean's Monte Carlo error (both >= 0).
string(JSON beyond GET "${out}" point_estimates 1 map_em_against_mean cells_beyond_3_mcse)
string(JSON excess GET "${out}" point_estimates 1 map_em_against_mean excess_squared_error)
string(JSON monte_carlo GET "${out}" point_estimates 1 map_em_against_mean mean_monte_carlo_squared_error)
if(NOT estimates EQUAL 2 OR NOT last STREQUAL "posterior-mean" OR NOT rhat GREATER 0.99 OR NOT rhat LESS 1.1
   OR converged STREQUAL "" OR NOT democrat_mean GREATER 0.5 OR NOT democrat_mean LESS 0.7 OR beyond LESS 0
   OR beyond GREATER 24 OR excess LESS 0 OR NOT monte_carlo GREATER 0)
  message(FATAL_ERROR "point_estimates with the posterior: ${estimates} entries, the last '${last}' (R-hat '${rhat}', "
                      "converged '${converged}', Class=democrat '${democrat_mean}', MAP-EM beyond 3 MCSE in '${beyond}' "
                      "cells, excess '${excess}', Monte Carlo '${monte_carlo}')")
endif()
file(STRINGS "${WORKDIR}/posterior/point_estimates.csv" lines REGEX "^posterior-mean,")
list(LENGTH lines posterior_rows)
if(NOT posterior_rows EQUAL 38)
  message(FATAL_ERROR "point_estimates.csv: ${posterior_rows} posterior-mean rows, expected 38")
endif()
message("MAP-EM JSON and tables: ${estimates} estimators, Class=democrat ${democrat}, ${data_rows} table rows, evidence "
        "'${evidence}'; posterior mean: R-hat ${rhat}, Class=democrat ${democrat_mean}, ${posterior_rows} rows")
