#!/bin/bash
# The ledger's property, under random use, for CTest:
#   ledger_property_test.sh RELEASE RECORDS_CSV CHECK_SCRIPT WORKDIR [SEED]
# Rounds of concurrent releases against one ledger (budget 1) through four names of it (the real path, a symbolic
# link, a path through a linked folder, a relative path with ..), each of a random epsilon, some held under the lock
# (PRIVPOST_LEDGER_HOLD_MS), some killed with SIGKILL at a random moment, some writing their record to /dev/full, and,
# as root, the ledger's file system filled to the last byte for some rounds. After every round, the checker
# (ledger_property_check.cmake) asserts: the ledger reads as a ledger; the epsilons of the release records actually
# written sum to at most the budget; every written record names an entry of the ledger with its own epsilon, each
# entry at most once. Bounded: 8 rounds of 4 processes, each killed within 0.2 s or finished within seconds.
set -u
release=$1
data=$2
check=$3
work=$4
RANDOM=${5:-2026}
rm -rf "$work" && mkdir -p "$work/real" || exit 1
cd "$work" || exit 1
mnt=""
cleanup() { [ -n "$mnt" ] && umount "$mnt" 2> /dev/null; }
trap cleanup EXIT
# As root (CI), the ledger lives on a 64 KiB tmpfs that some rounds fill; elsewhere on the work folder.
if [ "$(id -u)" -eq 0 ] && mkdir -p fs && mount -t tmpfs -o size=64k tmpfs fs 2> /dev/null; then
  mnt="$work/fs"
  rmdir real && mkdir fs/real && ln -s fs/real real
else
  echo "note: not root, or no tmpfs: the full-file-system rounds are skipped"
fi
ln -s real/ledger.json link.json
ln -s real folder
names=(real/ledger.json link.json folder/ledger.json "real/../real/ledger.json")
epsilons=(0.02 0.03 0.05 0.07 0.1)
"$release" --input "$data" --column sick --model binomial --epsilon 0.05 --ledger real/ledger.json --budget 1 \
  --output rec-0-0.json 2> /dev/null || { echo "FAIL: the first release"; exit 1; }
fail() {
  echo "FAIL: $*"
  exit 1
}
for round in 1 2 3 4 5 6 7 8; do
  full=0
  if [ -n "$mnt" ] && [ $((RANDOM % 3)) -eq 0 ]; then
    dd if=/dev/zero of="$mnt/filler" bs=1k 2> /dev/null
    full=1
  fi
  pids=()
  for p in 1 2 3 4; do
    name=${names[$((RANDOM % 4))]}
    eps=${epsilons[$((RANDOM % 5))]}
    out="rec-$round-$p.json"
    [ $((RANDOM % 6)) -eq 0 ] && out=/dev/full
    hold=$((RANDOM % 3 * 100))
    PRIVPOST_LEDGER_HOLD_MS=$hold "$release" --input "$data" --column sick --model binomial --epsilon "$eps" \
      --ledger "$name" --output "$out" 2> "err-$round-$p.txt" &
    pid=$!
    pids+=("$pid")
    if [ $((RANDOM % 3)) -eq 0 ]; then
      (sleep "0.$((RANDOM % 20))" && kill -9 "$pid" 2> /dev/null) &
    fi
  done
  for pid in "${pids[@]}"; do
    wait "$pid"
    status=$?
    # 0 released, 1 refused (over the budget, a full disk), 3 charged but the record lost, 137 killed
    case $status in 0 | 1 | 3 | 137) ;; *) fail "round $round: a release exited with status $status" ;; esac
  done
  wait
  [ "$full" -eq 1 ] && rm -f "$mnt/filler"
  records=$(ls rec-*.json 2> /dev/null | tr '\n' ';')
  cmake -DLEDGER=real/ledger.json "-DRECORDS=$records" -DBUDGET=1 -P "$check" > "check-$round.txt" 2>&1 ||
    { cat "check-$round.txt"; cat err-$round-*.txt; fail "round $round: the ledger's property does not hold"; }
  tail -1 "check-$round.txt"
done
# The next release (room again) cleans any killed writer's temporary file under the lock.
"$release" --input "$data" --column sick --model binomial --epsilon 0.001 --ledger link.json --output last.json 2> last.txt
ls real/ | grep -q 'privpost-tmp' && fail "a killed writer's temporary file survived the next release"
echo "ledger property: 8 rounds, the budget was never exceeded and every written record is in the ledger"
