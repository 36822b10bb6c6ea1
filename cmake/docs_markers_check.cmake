# Counts the ```sh blocks of README.md and docs/*.md and the docs test's markers before them (tests/docs/
# docs_commands_test.sh): a block moved to the coverage stage (`<!-- docs-test: coverage stage: ... -->`) still runs in
# CI, but a page whose commands mostly run there is no test of the default stage, so at most a quarter of all blocks
# may be moved; the blocks not run at all are counted and printed.
# cmake -DSOURCE_DIR=... -P docs_markers_check.cmake
file(GLOB pages "${SOURCE_DIR}/docs/*.md")
set(blocks 0)
set(moved 0)
set(not_run 0)
foreach(page "${SOURCE_DIR}/README.md" ${pages})
  file(STRINGS "${page}" lines REGEX "^(```sh|<!-- docs-test: (coverage stage|not run): )")
  foreach(line IN LISTS lines)
    if(line MATCHES "^```sh")
      math(EXPR blocks "${blocks} + 1")
    elseif(line MATCHES "coverage stage")
      math(EXPR moved "${moved} + 1")
    else()
      math(EXPR not_run "${not_run} + 1")
    endif()
  endforeach()
endforeach()
message(STATUS "docs: ${blocks} sh blocks; ${moved} run in the coverage stage, ${not_run} not run")
math(EXPR limit "${blocks} / 4")
if(moved GREATER limit)
  message(FATAL_ERROR "docs: ${moved} of ${blocks} sh blocks are moved to the coverage stage; accepted: at most a quarter (${limit})")
endif()
