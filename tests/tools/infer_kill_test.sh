#!/usr/bin/env bash
# privpost-infer --output-dir streams its CmdStan CSV files while the chains run: a run killed outright (SIGKILL: no
# handler, no flush at exit) leaves a file that is valid CmdStan CSV (the configuration comments, one column row, whole
# numeric rows of that width) holding the draws made until shortly before, fewer than the run planned.
# Usage: infer_kill_test.sh PRIVPOST_INFER RELEASE_JSON WORKDIR
set -euo pipefail
infer=$1
release=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
csv="$work/out/gibbs_1.csv"
# 10^5 kept draws of thin 1000: 10^8 sweeps, far longer than the test waits.
"$infer" "$release" --chains 1 --burnin 10 --draws 100000 --thin 1000 --output-dir "$work/out" > "$work/log" 2>&1 &
pid=$!
rows() { [ -f "$csv" ] && grep -c '^[-0-9]' "$csv" || echo 0; }
for _ in $(seq 1 600); do
  [ "$(rows)" -ge 20 ] && break
  kill -0 "$pid" 2> /dev/null || { echo "privpost-infer ended before it was killed:"; cat "$work/log"; exit 1; }
  sleep 0.1
done
kill -KILL "$pid"
wait "$pid" 2> /dev/null || true
[ -f "$csv" ] || { echo "no CmdStan CSV file was streamed"; exit 1; }
awk -v path="$csv" '
  /^#/ { if (header) { print path ": a comment after the draws began at line " NR; bad = 1 } else if ($0 ~ /kept_draws = 100000$/) planned = 1; next }
  !header { header = 1; width = split($0, names, ","); if (names[1] != "theta.1") { print path ": column row " $0; bad = 1 } next }
  {
    n = split($0, f, ",")
    if (n != width) { print path ": line " NR " has " n " fields for " width " columns"; bad = 1 }
    for (i = 1; i <= n; ++i) if (f[i] !~ /^-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?$/) { print path ": line " NR " field " f[i]; bad = 1 }
    ++draws
  }
  END {
    if (!planned) { print path ": no planned kept_draws = 100000 in the configuration"; bad = 1 }
    if (draws < 20 || draws >= 100000) { print path ": " draws " draws"; bad = 1 }
    if (bad) exit 1
    print path ": valid CmdStan CSV with " draws " draws after SIGKILL"
  }' "$csv"
