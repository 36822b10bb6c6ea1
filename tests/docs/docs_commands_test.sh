#!/bin/sh
# Docs are tests: every ```sh block of a documentation page runs as written, in the page's order, in a fresh directory
# laid out like the repository's root after the quick start (build/default is the build tree, examples/ and tests/ the
# sources), with the command-line tools also on PATH under their installed names (privpost-infer, ...).
#
#   docs_commands_test.sh PAGE SOURCE_DIR BUILD_DIR WORKDIR [coverage]
#
# A block fails the test when it exits non-zero (each runs under sh -e) or when a tool's output has a WARNING: a
# documented command must run with defaults that converge. A block right after the line
# `<!-- docs-test: not run: REASON -->` is shown on the page but not run here; the reason is printed, so the page says
# why (for example a study of several minutes, or the quick start itself). A block right after
# `<!-- docs-test: coverage stage: REASON -->` (a command of a minute or so, or one that needs the benchmarks built) runs
# in the coverage stage instead: with the fifth argument `coverage` only those blocks run, and they must not depend on
# the page's other blocks (cmake/docs_markers_check.cmake keeps them to a quarter of all blocks). A ```text block right after the line
# `<!-- docs-test: the output of the block above -->` is what the previous ```sh block prints on standard output,
# exactly; with `<!-- docs-test: the output of the block above, each line's last field aside -->` the last field of
# every line is left out of the comparison (a time). Other code blocks (``` without sh, indented blocks) are synopses
# and are not run.
set -eu
page=$1 source_dir=$2 build_dir=$3 workdir=$4 stage=${5:-default}

rm -rf "$workdir"
mkdir -p "$workdir/build" "$workdir/.blocks"
ln -s "$build_dir" "$workdir/build/default"
ln -s "$source_dir/examples" "$workdir/examples"
ln -s "$source_dir/tests" "$workdir/tests"
PATH="$build_dir/examples:$PATH"
export PATH

# Each ```sh block to .blocks/NN.sh; a block after a not-run marker to .blocks/NN.skip (holding the reason); a block
# after a coverage-stage marker to .blocks/NN.sh in the coverage stage, else to .blocks/NN.skip (the reason prefixed).
awk -v dir="$workdir/.blocks" -v stage="$stage" '
  /^<!-- docs-test: not run: .* -->$/ { reason = $0; sub(/^<!-- docs-test: not run: /, "", reason); sub(/ -->$/, "", reason); next }
  /^<!-- docs-test: coverage stage: .* -->$/ {
    later = $0; sub(/^<!-- docs-test: coverage stage: /, "", later); sub(/ -->$/, "", later); next
  }
  /^<!-- docs-test: the output of the block above(, each line.s last field aside)? -->$/ {
    if (n == 0) { print "docs_commands_test: an output marker before any sh block" > "/dev/stderr"; exit 1 }
    expect = sprintf("%s/%02d.expect", dir, n)
    if ($0 ~ /last field aside/) print "" > sprintf("%s/%02d.lastfield", dir, n)
    next
  }
  !inside && expect != "" && /^```text[ \t]*$/ { inside = 1; file = expect; expect = ""; next }
  !inside && /^```sh[ \t]*$/ {
    inside = 1; n++
    # The coverage stage runs the coverage-stage blocks only; the default stage every other block.
    if (stage == "coverage" && later == "" && reason == "") reason = "runs in the default stage"
    if (stage == "coverage" && later != "") reason = ""
    if (stage != "coverage" && later != "") reason = "in the coverage stage: " later
    later = ""
    file = sprintf("%s/%02d.%s", dir, n, reason == "" ? "sh" : "skip")
    if (reason != "") { print reason > file; reason = "" }
    next
  }
  inside && /^```/ { inside = 0; if (file !~ /\.skip$/) printf "" >> file; close(file); next }
  inside { if (file !~ /\.skip$/) print > file; next }
  NF > 0 { reason = ""; later = ""; expect = "" }  # a marker applies to the block right after it only
' "$page"

ran=0 skipped=0 compared=0
# A file's lines with each line's last field left out (lastfield set) or as they are.
shown() {
  if [ -e "$2" ]; then awk '{ $NF = ""; sub(/[ \t]+$/, ""); print }' "$1"; else cat "$1"; fi
}
for block in "$workdir"/.blocks/*.sh "$workdir"/.blocks/*.skip; do
  [ -e "$block" ] || continue
  case "$block" in
    *.skip)
      skipped=$((skipped + 1))
      echo "--- block $(basename "$block" .skip): not run: $(cat "$block")"
      continue
      ;;
  esac
  ran=$((ran + 1))
  base=${block%.sh}
  echo "--- block $(basename "$base"):"
  cat "$block"
  status=0
  (cd "$workdir" && sh -e "$block") > "$base.out" 2> "$base.err" || status=$?
  cat "$base.out" "$base.err"
  if [ "$status" -ne 0 ]; then
    echo "docs_commands_test: a block of $page exited with status $status"
    exit 1
  fi
  # Debian's Google Benchmark library says of itself that it "was built as DEBUG" on every run: not a warning of ours.
  if grep -v '^\*\*\*WARNING\*\*\* Library was built as DEBUG' "$base.out" "$base.err" | grep -q "WARNING"; then
    echo "docs_commands_test: a block of $page printed a WARNING (a documented command must converge with its defaults)"
    exit 1
  fi
  if [ -e "$base.expect" ]; then
    compared=$((compared + 1))
    shown "$base.out" "$base.lastfield" > "$base.out.cmp"
    shown "$base.expect" "$base.lastfield" > "$base.expect.cmp"
    if ! diff -u "$base.expect.cmp" "$base.out.cmp"; then
      echo "docs_commands_test: the output of a block of $page differs from the output the page shows (diff above)"
      exit 1
    fi
  fi
done
if [ "$stage" = coverage ] && [ "$ran" -eq 0 ]; then
  echo "docs_commands_test: $page has no coverage-stage block"
  exit 1
fi
if [ "$ran" -eq 0 ] && [ "$skipped" -eq 0 ]; then
  echo "docs_commands_test: $page has no \`\`\`sh block"
  exit 1
fi
echo "docs_commands_test: $page ($stage stage): $ran block(s) ran ($compared with the output the page shows), $skipped not run here"
