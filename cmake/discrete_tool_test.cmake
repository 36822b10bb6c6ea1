# The lattice release of privpost-release and its inference by privpost-infer, for CTest:
#   cmake -DRELEASE=... -DINFER=... -DDATA=records.csv -DWORKDIR=... -P discrete_tool_test.cmake
# Checks: counts at gamma = 1 are released as whole numbers on an exact lattice and inferred (Gibbs-SS and the exact
# sampler); a real-valued model needs --granularity, is rounded, and releases multiples of it; the record states the
# lattice; bad uses are refused with a message: a lattice mechanism for a non-family model, --granularity without one,
# a record whose noisy statistic is off the lattice or whose scale does not match its calibration.
foreach(v RELEASE INFER DATA WORKDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "discrete_tool_test.cmake: -D${v} is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORKDIR}")

include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
function(run expect regex)
  privpost_expect_run("${WORKDIR}" "${expect}" "${regex}" ${ARGN})
endfunction()

function(expect_field json expected)
  string(JSON value GET "${json}" ${ARGN})
  if(NOT value MATCHES "^${expected}$")
    message(FATAL_ERROR "release record field ${ARGN} is '${value}', expected '${expected}'")
  endif()
endfunction()

# 1. Counts: binomial, discrete Laplace, gamma = 1 (exact lattice).
run(success "released 1 statistic.*discrete-laplace"
    "${RELEASE}" --input "${DATA}" --column sick --model binomial --epsilon 0.5 --mechanism discrete-laplace
    --output dl_binomial.json)
file(READ "${WORKDIR}/dl_binomial.json" record)
expect_field("${record}" "discrete-laplace" mechanism name)
expect_field("${record}" "exact" mechanism lattice)
expect_field("${record}" "1(\\.0)?" mechanism lattice_sensitivity)
expect_field("${record}" "2(\\.0)?" mechanism scale)
string(JSON z GET "${record}" noisy_statistics 0)
if(NOT z MATCHES "^-?[0-9]+(\\.0)?$")
  message(FATAL_ERROR "the lattice release '${z}' is not a whole number")
endif()
run(success "discrete-laplace mechanism \\(epsilon 0.5, lattice 1 Z, statistics exact\\).*noise-aware Gibbs-SS"
    "${INFER}" dl_binomial.json --draws 200 --burnin 100 --compare-naive)
run(success "noise-aware exact" "${INFER}" dl_binomial.json --method exact --draws 200 --burnin 100)

# 2. Counts with the discrete Gaussian: multinomial, exact lattice, zCDP calibration.
run(success "released 2 statistic.*discrete-gaussian"
    "${RELEASE}" --input "${DATA}" --column answer --model multinomial --categories 3 --epsilon 1 --delta 1e-6
    --mechanism discrete-gaussian --output dg_multinomial.json)
file(READ "${WORKDIR}/dg_multinomial.json" record)
expect_field("${record}" "zcdp" mechanism calibration)
run(success "noise-aware Gibbs-SS" "${INFER}" dg_multinomial.json --draws 200 --burnin 100)

# 3. A real-valued model needs the lattice declared; then its statistics are rounded to multiples of it.
run(failure "declare the lattice with --granularity"
    "${RELEASE}" --input "${DATA}" --column wait --model exponential --epsilon 1 --lower 0 --upper 8
    --mechanism discrete-laplace)
run(success "released 1 statistic"
    "${RELEASE}" --input "${DATA}" --column wait --model exponential --epsilon 1 --lower 0 --upper 8
    --mechanism discrete-laplace --granularity 0.25 --output dl_exponential.json)
file(READ "${WORKDIR}/dl_exponential.json" record)
expect_field("${record}" "rounded" mechanism lattice)
expect_field("${record}" "0\\.25" mechanism granularity)
string(JSON z GET "${record}" noisy_statistics 0)
# CMake has no floating-point math: check the decimal digits instead
if(NOT z MATCHES "^-?[0-9]+(\\.(0|25|5|75))?$")
  message(FATAL_ERROR "the lattice release '${z}' is not a multiple of 0.25")
endif()
run(success "lattice 0.25 Z, statistics rounded.*truncated release" "${INFER}" dl_exponential.json --prior 2,4 --draws 200
    --burnin 100)

# 4. Bad uses.
run(failure "serves the family models"
    "${RELEASE}" --input "${DATA}" --model linreg --covariates wait --response sick --x-bounds 0,8 --y-bounds 0,1
    --epsilon 1 --mechanism discrete-gaussian)
run(failure "--granularity does not apply to this release .*it applies to the lattice mechanisms"
    "${RELEASE}" --input "${DATA}" --column sick --model binomial --epsilon 1 --granularity 0.5)
# a noisy statistic off the lattice, and a scale that does not match the calibration
string(JSON tampered SET "${record}" noisy_statistics 0 "3.1")
file(WRITE "${WORKDIR}/dl_off_lattice.json" "${tampered}")
run(failure "noisy_statistics: z is 3.1.*a multiple of the granularity" "${INFER}" dl_off_lattice.json --prior 2,4)
file(READ "${WORKDIR}/dl_binomial.json" record)
string(JSON tampered SET "${record}" mechanism scale "1.5")
file(WRITE "${WORKDIR}/dl_wrong_scale.json" "${tampered}")
run(failure "does not match the lattice calibration" "${INFER}" dl_wrong_scale.json)
