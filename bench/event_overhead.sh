#!/usr/bin/env bash
# What the event stream costs when nobody listens: bench_observe_overhead
# (bench/observe_overhead.cpp) built twice, as configured (WOK_EVENTS=ON)
# and with every emit site compiled out (-DWOK_EVENTS=OFF), run in
# alternation so both see the same machine load; prints per-op times and
# the median of the per-round ratios. Target: under 2% apart.
#
# Usage: bench/event_overhead.sh [events-on build dir] [events-off build dir]
#   defaults: build and build-events-off next to the sources
#   ROUNDS=N (default 7)   JOBS=N (default: all cores)
#   FILTER=REGEX (default: the no-listener benchmarks, '/0$')
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
on=${1:-$src/build}
off=${2:-$src/build-events-off}
rounds=${ROUNDS:-7}
jobs=${JOBS:-$(nproc)}
filter=${FILTER:-/0\$}

configure() {  # dir, extra flags...
  local dir=$1
  shift
  if [[ ! -f $dir/CMakeCache.txt ]]; then
    cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  elif [[ $# -gt 0 ]]; then
    cmake -S "$src" -B "$dir" "$@" >/dev/null
  fi
  cmake --build "$dir" --target bench_observe_overhead -j "$jobs" >/dev/null
}

echo "building $on (events on) and $off (events compiled out)..." >&2
configure "$on"
configure "$off" -DWOK_EVENTS=OFF -DWOK_BUILD_TESTS=OFF -DWOK_BUILD_EXAMPLES=OFF -DWOK_BUILD_CUDA_KERNELS=OFF

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # dir, output file
  "$1/bench/bench_observe_overhead" --benchmark_filter="$filter" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>/dev/null | grep '^observe_overhead ' >>"$2"
}
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r/$rounds" >&2
  : >"$tmp/on.$r"
  : >"$tmp/off.$r"
  if ((r % 2)); then run "$on" "$tmp/on.$r"; run "$off" "$tmp/off.$r"; else run "$off" "$tmp/off.$r"; run "$on" "$tmp/on.$r"; fi
done

# Per benchmark: median ns/op of each build, and the median of per-round ratios.
awk -v rounds="$rounds" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    split(FILENAME, p, "/"); split(p[length(p)], q, ".")
    side = q[1]; round = q[2]
    name = $2; for (i = 3; i < NF; ++i) name = name " " $i
    v[side, name, round] = $NF; names[name] = 1
  }
  END {
    printf "%-28s %14s %14s %10s\n", "benchmark (ns per op)", "events on", "events off", "on/off"
    for (name in names) {
      lon = ""; loff = ""; lr = ""
      for (r = 1; r <= rounds; ++r) {
        if (!(("on", name, r) in v) || !(("off", name, r) in v)) continue
        lon = lon " " v["on", name, r]; loff = loff " " v["off", name, r]
        lr = lr " " v["on", name, r] / v["off", name, r]
      }
      printf "%-28s %14.1f %14.1f %9.2f%%\n", name, median(lon), median(loff), (median(lr) - 1) * 100
    }
  }' "$tmp"/on.* "$tmp"/off.*
