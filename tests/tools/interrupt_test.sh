#!/bin/sh
# Ctrl-C in the tools, for CTest: interrupt_test.sh INFER CALIBRATE RECORD WORKDIR.
# privpost-infer on a run planned to take minutes gets SIGINT after 3 s: it must exit with status 130, say so, and
# write what it has (the summary marked INTERRUPTED, --draws-csv and --output-dir with the kept draws, the CmdStan files
# marked interrupted = 1, no naive run). privpost-calibrate likewise: status 130 and a table of the trials done.
# (A background job of a non-interactive shell starts with SIGINT ignored; the tools install their handler anyway.)
set -u
infer=$1
calibrate=$2
record=$3
work=$4
fail() {
  echo "FAIL: $*"
  for f in out.txt err.txt cal.txt calerr.txt; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}
# Sends SIGINT (Ctrl-C) to the background job $1 after 3 s and sets status to its exit status.
interrupt_after_3s() {
  sleep 3
  kill -INT "$1"
  wait "$1"
  status=$?
}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

"$infer" "$record" --compare-naive --chains 2 --parallel --burnin 100 --draws 1000 --thin 100000 --draws-csv d.csv \
  --output-dir out > out.txt 2> err.txt &
interrupt_after_3s $!
[ "$status" -eq 130 ] || fail "privpost-infer exit status $status, not 130"
grep -q "INTERRUPTED (Ctrl-C): [0-9]* draws per chain" out.txt || fail "no INTERRUPTED line in the summary"
grep -q "privpost-infer: interrupted (Ctrl-C)" err.txt || fail "no interruption message on stderr"
grep -q "^#   interrupted = 1" out/gibbs_1.csv || fail "out/gibbs_1.csv is not marked interrupted"
[ ! -e out/naive_1.csv ] || fail "the naive method ran after the interruption"
rows=$(($(wc -l < d.csv) - 1))
[ "$rows" -ge 2 ] || fail "the draws CSV has $rows draws"
echo "privpost-infer: status 130, $rows draws kept and written"

"$calibrate" --model binomial --trials 1000000 --draws 100 --burnin 100 --mmd-draws 0 > cal.txt 2> calerr.txt &
interrupt_after_3s $!
[ "$status" -eq 130 ] || fail "privpost-calibrate exit status $status, not 130"
grep -q "interrupted (Ctrl-C) after [0-9]* of 1000000 trials" calerr.txt || fail "no interruption message"
grep -q "^gibbs " cal.txt || fail "no table"
echo "privpost-calibrate: status 130, $(grep -o 'after [0-9]* of' calerr.txt)"
echo "interrupt test: ok"
