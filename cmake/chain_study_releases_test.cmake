# The chain study's release export, for CTest: STUDY --write-releases in a fresh WORKDIR at a small setting (both
# neighbour relations, 2 models x 1 release, no posterior) writes releases.csv (its header, one row per released cell:
# 2 relations x 2 releases x 81 cells, the Laplace scale of each relation) and kl.csv (its header, one row per release,
# the posterior column empty without --posterior); a directory that cannot be made is refused by name.
include("${CMAKE_CURRENT_LIST_DIR}/tool_test_support.cmake")
privpost_require_defined(STUDY WORKDIR)
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
privpost_expect_run("${WORKDIR}" success "releases written to out/releases.csv, privpost's KL of each to out/kl.csv"
  "${STUDY}" --n 10000 --epsilon 0.1 --models 2 --releases 1 --neighbours both --write-releases out)
file(STRINGS "${WORKDIR}/out/releases.csv" lines)
list(LENGTH lines count)
list(GET lines 0 header)
list(GET lines 1 first)
list(GET lines 163 replace_first)
if(NOT header STREQUAL "neighbours,n,epsilon,scale,model,release,edge,node_u,node_v,state_u,state_v,true_probability,true_count,released"
   OR NOT count EQUAL 325)
  message(FATAL_ERROR "releases.csv: header '${header}', ${count} lines (expected 1 + 2 x 2 x 81)")
endif()
set(number "-?[0-9.]+(e[-+][0-9]+)?")
if(NOT first MATCHES "^add-remove,10000,0.1,90,0,0,0,0,1,0,0,0\\.[0-9]+,[0-9]+,${number}$"
   OR NOT replace_first MATCHES "^replace,10000,0.1,180,0,0,0,0,1,0,0,0\\.[0-9]+,[0-9]+,${number}$")
  message(FATAL_ERROR "releases.csv rows: '${first}', '${replace_first}'")
endif()
file(STRINGS "${WORKDIR}/out/kl.csv" kl)
list(LENGTH kl kl_count)
list(GET kl 0 kl_header)
list(GET kl 4 kl_last)
if(NOT kl_header STREQUAL "neighbours,n,epsilon,model,release,map_em_kl,posterior_mean_kl" OR NOT kl_count EQUAL 5
   OR NOT kl_last MATCHES "^replace,10000,0.1,1,0,0\\.[0-9]+,$")
  message(FATAL_ERROR "kl.csv: header '${kl_header}', ${kl_count} lines, last '${kl_last}'")
endif()
file(WRITE "${WORKDIR}/blocker" "a file, not a directory\n")
privpost_expect_run("${WORKDIR}" failure "--write-releases 'blocker/out': cannot create the directory or its files"
  "${STUDY}" --n 1000 --epsilon 1 --models 1 --releases 1 --write-releases blocker/out)
