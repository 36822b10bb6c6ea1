#!/bin/sh
# A full disk must never cost the ledger an entry, nor lose a charged release silently, for CTest:
#   full_disk_test.sh RELEASE RECORDS_CSV WORKDIR
# The ledger and the release records live on a 64 KiB tmpfs. 0.3 of a budget of 1 is charged; the disk is filled; a
# second release must fail (the ledger cannot be rewritten) and leave the ledger with its one entry; with room again,
# a release of 0.9 must be refused (0.3 + 0.9 > 1). Before the ledger was written through a temporary file and a
# rename, the rewrite truncated the file, the full disk left it empty, and the next run took it for a new ledger and
# admitted the 0.9. Then a release whose record cannot be written to the full disk (the ledger is elsewhere) must exit
# non-zero and name the charged entry.
# Mounting needs root (CI runs as root): elsewhere the test is skipped with exit status 77, saying so.
set -u
release=$1
data=$2
work=$3
mnt="$work/fs"
fail() {
  echo "FAIL: $*"
  [ -f "$work/err.txt" ] && { echo "--- stderr of the last release"; cat "$work/err.txt"; }
  exit 1
}
cleanup() { umount "$mnt" 2> /dev/null; }
umount "$mnt" 2> /dev/null  # a mount left by an interrupted earlier run
rm -rf "$work" && mkdir -p "$mnt" || exit 1
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=64k tmpfs "$mnt" 2> /dev/null; then
  echo "SKIPPED: mounting a small tmpfs needs root (and a kernel that allows it); this test runs in CI as root"
  exit 77
fi
trap cleanup EXIT
base="$release --input $data --column sick --model binomial"
ledger="$mnt/ledger.json"

$base --epsilon 0.3 --ledger "$ledger" --budget 1 --output "$mnt/first.json" 2> "$work/err.txt" || fail "the first release"
grep -q '"epsilon": 0.3' "$ledger" || fail "the ledger does not record the first release"

# Fill the file system to the last byte.
dd if=/dev/zero of="$mnt/filler" bs=1k 2> /dev/null
$base --epsilon 0.3 --ledger "$ledger" --output "$work/second.json" 2> "$work/err.txt" && fail "a release on a full disk succeeded"
grep -q "cannot write" "$work/err.txt" || fail "the full-disk failure does not say that the ledger could not be written"
grep -q "nothing was charged" "$work/err.txt" || fail "the full-disk failure does not say that nothing was charged"
[ -e "$work/second.json" ] && fail "a release whose charge failed wrote a record"
ls "$mnt" | grep -v '^ledger.json.lock$' | grep -q '^ledger.json.' && fail "the failed rewrite left its temporary file"
entries=$(grep -c '"label"' "$ledger")
[ "$entries" -eq 1 ] || fail "the ledger holds $entries entries after the full-disk failure (expected 1)"

# Room again: the spend of 0.3 is still there, so 0.9 is over the total of 1.
rm -f "$mnt/filler"
$base --epsilon 0.9 --ledger "$ledger" --budget 1 --output "$work/third.json" 2> "$work/err.txt" && fail "0.9 admitted after 0.3 of 1"
grep -q "over the privacy budget" "$work/err.txt" || fail "the overspend was refused without saying why"

# A record lost on a full disk after its charge: exit status 3 and the charged entry named. The ledger is off the full
# file system; the record's temporary file can be created (an inode) but not written.
dd if=/dev/zero of="$mnt/filler" bs=1k 2> /dev/null
$base --epsilon 0.2 --ledger "$work/ledger2.json" --budget 1 --output "$mnt/lost.json" 2> "$work/err.txt"
status=$?
[ "$status" -eq 3 ] || fail "a record lost after its charge exited with status $status (expected 3)"
grep -q "WAS CHARGED to the ledger '$work/ledger2.json': entry 1 (" "$work/err.txt" || fail "the lost record's charge is not named"
[ -e "$mnt/lost.json" ] && fail "a partial record was left at the target path"
ls "$mnt" | grep -q "lost.json." && fail "the record's temporary file was left behind"
echo "full disk: the ledger kept its entry, the overspend was refused, the lost record was reported"
