#!/bin/sh
# Runs one fault test of wok_dist_tests (tests/dist/fault_test.cpp) as its
# own mpirun job, and passes when every surviving rank printed its
# "DIST-FAULT-PASS rank r" line.
#
#   run_fault.sh MPIRUN NP "SURVIVORS" BINARY GTEST_FILTER
#
# mpirun's own exit status is not the verdict: after a fault the ranks exit
# without MPI_Finalize, and a dead rank is an abnormal exit by design
# (--enable-recovery keeps the others running). A job that outlives the
# limit below is a hang, and fails.
set -u
if [ $# -ne 5 ]; then
  echo "usage: $0 MPIRUN NP SURVIVORS BINARY GTEST_FILTER" >&2
  exit 2
fi
mpirun=$1 np=$2 survivors=$3 binary=$4 filter=$5
limit=${WOK_FAULT_LIMIT:-60}

dir=$(mktemp -d "${TMPDIR:-/tmp}/wok-dist-fault.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
WOK_FAULT_DIR=$dir
WOK_DIST_TIMEOUT=${WOK_DIST_TIMEOUT:-2}
export WOK_FAULT_DIR WOK_DIST_TIMEOUT

timeout -k 5 "$limit" "$mpirun" --allow-run-as-root --oversubscribe --enable-recovery \
  -x WOK_FAULT_DIR -x WOK_DIST_TIMEOUT -np "$np" "$binary" --gtest_filter="$filter" >"$dir/out" 2>&1
rc=$?
cat "$dir/out"

status=0
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "run_fault.sh: FAIL: the job did not end within $limit s (a hang)"
  status=1
fi
for r in $survivors; do
  if ! grep -q "^DIST-FAULT-PASS rank $r\$" "$dir/out"; then
    echo "run_fault.sh: FAIL: no DIST-FAULT-PASS line from rank $r"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "run_fault.sh: PASS ($filter on $np ranks; mpirun exited with $rc)"
exit $status
