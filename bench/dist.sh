#!/usr/bin/env bash
# bench_dist (bench/dist.cpp) on 2 and then 4 ranks of this machine, over
# shared memory: wok::dist::all_reduce against MPI_Allreduce, and an
# all_reduce overlapped with an independent matmul. Builds the target first.
#
# Usage: bench/dist.sh [build dir]     (default: build next to the sources)
#   RANKS="2 4" (default)   WOK_BENCH_ROUNDS=N (default 15)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
ranks=${RANKS:-2 4}

cmake --build "$build" --target bench_dist >/dev/null
for np in $ranks; do
  mpirun --allow-run-as-root --oversubscribe -np "$np" "$build/bench/bench_dist"
  echo
done
