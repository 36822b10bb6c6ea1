#!/usr/bin/env bash
# privpost-infer --output-dir streams its CmdStan CSV files while the chains run: a run killed outright (SIGKILL: no
# handler, no flush at exit) leaves a file that is valid CmdStan CSV (the configuration comments, one column row, whole
# numeric rows of that width) holding the draws made until shortly before, fewer than the run planned.
# A model whose reported draws are transformed from the sampled ones (the GLMs on the data's scale) streams the reported
# parameters: PARAMETERS of them (theta.1 ... theta.PARAMETERS; 0: not checked).
# Usage: infer_kill_test.sh PRIVPOST_INFER RELEASE_JSON WORKDIR [METHOD THIN PARAMETERS [OPTION...]]
# (default: gibbs 1000 0)
set -euo pipefail
infer=$1
release=$2
work=$3
method=${4:-gibbs}
thin=${5:-1000}
parameters=${6:-0}
shift $(( $# < 6 ? $# : 6 ))
rm -rf "$work"
mkdir -p "$work"
csv="$work/out/${method}_1.csv"
# 10^5 kept draws (of thin 1000 by default: 10^8 sweeps), far longer than the test waits.
"$infer" "$release" --chains 1 --burnin 10 --draws 100000 --thin "$thin" --output-dir "$work/out" "$@" > "$work/log" 2>&1 &
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
awk -v path="$csv" -v parameters="$parameters" '
  /^#/ { if (header) { print path ": a comment after the draws began at line " NR; bad = 1 } else if ($0 ~ /kept_draws = 100000$/) planned = 1; next }
  !header {
    header = 1; width = split($0, names, ",")
    for (i = 1; i <= width; ++i) if (names[i] ~ /^theta\./) ++thetas
    if (names[1] != "theta.1" && names[1] != "lp__") { print path ": column row " $0; bad = 1 }
    if (parameters > 0 && thetas != parameters) { print path ": " thetas " parameters, not " parameters; bad = 1 }
    next
  }
  {
    n = split($0, f, ",")
    if (n != width) { print path ": line " NR " has " n " fields for " width " columns"; bad = 1 }
    for (i = 1; i <= n; ++i) if (f[i] !~ /^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/) { print path ": line " NR " field " f[i]; bad = 1 }
    ++draws
  }
  END {
    if (!planned) { print path ": no planned kept_draws = 100000 in the configuration"; bad = 1 }
    if (draws < 20 || draws >= 100000) { print path ": " draws " draws"; bad = 1 }
    if (bad) exit 1
    print path ": valid CmdStan CSV with " draws " draws after SIGKILL"
  }' "$csv"
