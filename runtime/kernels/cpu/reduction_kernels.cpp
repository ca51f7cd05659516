// Precompiled kernels of the reductions: sum, mean, max, min, prod, argmax.
//
// Note [Reduction layout]
// Size-1 dims are dropped and adjacent dims that are both reduced or both
// kept are merged, so any reduction becomes alternating groups of kept (K)
// and reduced (R) dims over a contiguous input. Two loops cover all cases:
//  - the innermost group is reduced ("inner"): each output reduces one or
//    more contiguous runs, with several independent lane accumulators;
//  - the innermost group is kept ("outer"): each output row accumulates
//    whole input rows, out[j] op= x[r, j], vectorized across j.
// Other groups are walked with an odometer.
//
// Note [Deterministic splitting]
// Work is cut into units whose bounds depend only on the shape (kChunk
// elements), never on the thread count, and partial results are combined in
// a fixed order, so every thread count gives bitwise the same result.
// Floating-point sums are blocked: lanes of at most 32 elements, blocks
// merged by a binary cascade (pairwise summation), so the error grows with
// log(n) rather than n.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/wrapping.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

// Elements of one work unit (see Note [Deterministic splitting]).
constexpr int64_t kChunk = 1 << 16;
// Input elements worth a parallel chunk.
constexpr int64_t kGrain = 1 << 15;
// Bytes of accumulators per column tile in the "outer" loop (they stay in
// L1), and input elements per unit there.
constexpr int64_t kColTileBytes = 32768;
constexpr int64_t kOuterChunk = 1 << 18;
// Inner kept runs up to this long are reduced as one flat stream.
constexpr int64_t kSmallRow = 16;
// Elements per lane in a pairwise block, and rows per block in the "outer" loop.
constexpr int64_t kLaneDepth = 32;
constexpr int64_t kRowBlock = 16;
constexpr int kMaxGroups = 64;

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <typename T>
T nan_or_zero() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else return T(0);
}

// ---- ops ---------------------------------------------------------------------------
// Each op says how to start from one element (first), fold in another
// (step), combine two partial results of consecutive ranges (merge, left
// first), and produce the output (finish); `empty` is the result of
// reducing zero elements.

template <typename In_, typename P_, typename Out_>
struct SumOp {
  using In = In_;
  using P = P_;
  using Out = Out_;
  static constexpr bool kPairwise = std::is_floating_point_v<P>;
  static constexpr bool kIndexed = false;
  static P first(In x, int64_t) { return static_cast<P>(x); }
  static P step(P a, In x, int64_t) { return wrap_add(a, static_cast<P>(x)); }
  static P merge(P a, P b) { return wrap_add(a, b); }
  static Out finish(P a, int64_t) { return static_cast<Out>(a); }
  static Out empty() { return Out(0); }
};

template <typename In_, typename P_, typename Out_>
struct MeanOp : SumOp<In_, P_, Out_> {
  static Out_ finish(P_ a, int64_t n) {
    if constexpr (std::is_floating_point_v<P_>) return static_cast<Out_>(a / static_cast<P_>(n));
    else return static_cast<Out_>(static_cast<double>(a) / static_cast<double>(n));
  }
  static Out_ empty() { return std::numeric_limits<Out_>::quiet_NaN(); }
};

template <typename In_, typename P_>
struct ProdOp {
  using In = In_;
  using P = P_;
  using Out = P_;
  static constexpr bool kPairwise = false;
  static constexpr bool kIndexed = false;
  static P first(In x, int64_t) { return static_cast<P>(x); }
  static P step(P a, In x, int64_t) { return wrap_mul(a, static_cast<P>(x)); }
  static P merge(P a, P b) { return wrap_mul(a, b); }
  static Out finish(P a, int64_t) { return a; }
  static Out empty() { return Out(1); }
};

template <typename T, bool kMax>
struct MaxMinOp {
  using In = T;
  using P = T;
  using Out = T;
  static constexpr bool kPairwise = false;
  static constexpr bool kIndexed = false;
  static P first(In x, int64_t) { return x; }
  static P step(P a, In x, int64_t) { return kMax ? vm::maximum(a, x) : vm::minimum(a, x); }
  static P merge(P a, P b) { return step(a, b, 0); }
  static Out finish(P a, int64_t) { return a; }
  static Out empty() { return nan_or_zero<T>(); }  // rejected by the shape rule
};

template <typename T>
struct ArgP {
  T v;
  int64_t i;
};

template <typename T>
struct ArgmaxOp {
  using In = T;
  using P = ArgP<T>;
  using Out = int64_t;
  static constexpr bool kPairwise = false;
  static constexpr bool kIndexed = true;
  // x beats the best so far: greater, or the first nan.
  // Bitwise, not short-circuit, so that loops over it if-convert and vectorize.
  static bool better(T x, T best) { return (x > best) | (is_nan(x) & !is_nan(best)); }
  static P first(In x, int64_t i) { return {x, i}; }
  static P step(P a, In x, int64_t i) {
    bool b = better(x, a.v);
    return {b ? x : a.v, b ? i : a.i};
  }
  static P merge(P a, P b) { return better(b.v, a.v) ? b : a; }
  static Out finish(P a, int64_t) { return a.i; }
  static Out empty() { return 0; }  // rejected by the shape rule
};

// Combines partial results of lanes that interleave (not consecutive
// ranges): argmax breaks ties by index instead of by order.
template <class Op>
typename Op::P merge_lanes(typename Op::P a, typename Op::P b) {
  if constexpr (Op::kIndexed) {
    if (Op::better(b.v, a.v)) return b;
    if (Op::better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  } else {
    return Op::merge(a, b);
  }
}

// ---- cascades: pairwise combination of a stream of partial results ----------------

// Partial results of `w` lanes each, merged like a binary counter: level l
// holds the merge of 2^l consecutive pushes, earlier ranges on the left.
template <class Op>
class Cascade {
 public:
  using P = typename Op::P;
  static_assert(std::is_floating_point_v<P>, "cascades are for floating-point sums");
  explicit Cascade(int64_t w) : w_(w) { levels_.reserve(static_cast<size_t>(8 * w)); }

  // Consumes v (it is used as scratch).
  void push(P* v) {
    int l = 0;
    for (uint64_t c = n_; c & 1; c >>= 1, ++l) {
      const P* s = &levels_[static_cast<size_t>(l * w_)];
      for (int64_t j = 0; j < w_; ++j) v[j] = Op::merge(s[j], v[j]);
    }
    if (levels_.size() < static_cast<size_t>((l + 1) * w_)) levels_.resize(static_cast<size_t>((l + 1) * w_));
    std::copy(v, v + w_, &levels_[static_cast<size_t>(l * w_)]);
    ++n_;
  }
  bool empty() const { return n_ == 0; }
  // The merge of everything pushed, into out. Needs at least one push.
  void result(P* out) const {
    bool have = false;
    for (int l = 0; (n_ >> l) != 0; ++l) {
      if (!((n_ >> l) & 1)) continue;
      const P* s = &levels_[static_cast<size_t>(l * w_)];
      if (!have) std::copy(s, s + w_, out);
      else
        for (int64_t j = 0; j < w_; ++j) out[j] = Op::merge(s[j], out[j]);
      have = true;
    }
  }

 private:
  int64_t w_;
  uint64_t n_ = 0;
  std::vector<P> levels_;
};

template <class Op>
class ScalarCascade {
 public:
  using P = typename Op::P;
  void push(P v) {
    int l = 0;
    for (uint64_t c = n_; c & 1; c >>= 1, ++l) v = Op::merge(levels_[l], v);
    levels_[l] = v;
    ++n_;
  }
  P result() const {
    P out{};
    bool have = false;
    for (int l = 0; (n_ >> l) != 0; ++l) {
      if (!((n_ >> l) & 1)) continue;
      out = have ? Op::merge(levels_[l], out) : levels_[l];
      have = true;
    }
    return out;
  }

 private:
  uint64_t n_ = 0;
  P levels_[64];
};

// Merges parts[0], parts[stride], ... (count of them, each w lanes) in
// order, pairwise, into parts[0].
template <class Op>
void tree_merge(typename Op::P* parts, int64_t count, int64_t stride, int64_t w) {
  for (int64_t step = 1; step < count; step *= 2)
    for (int64_t s = 0; s + step < count; s += 2 * step) {
      typename Op::P* a = parts + s * stride;
      const typename Op::P* b = parts + (s + step) * stride;
      for (int64_t j = 0; j < w; ++j) a[j] = Op::merge(a[j], b[j]);
    }
}

// ---- contiguous runs -----------------------------------------------------------------

// Software prefetch ahead of long streaming loops: the hardware prefetcher
// alone leaves DRAM bandwidth unused when a loop has several instructions
// per vector (max/min), and it stops at page boundaries.
constexpr int64_t kPrefetchBytes = 2048;

template <typename In, int64_t kBytes>
inline void prefetch_ahead(const In* p) {
  for (int64_t b = 0; b < kBytes; b += 64) __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes + b);
}

// K independent lanes over x[0, n), n >= K; folded pairwise at the end.
template <class Op, int K>
typename Op::P lane_run(const typename Op::In* __restrict x, int64_t n) {
  using P = typename Op::P;
  P acc[K];
  if constexpr (!Op::kPairwise) {
    for (int k = 0; k < K; ++k) acc[k] = Op::first(x[k], 0);
    constexpr int64_t kBytes = std::max<int64_t>(64, K * sizeof(*x));
    int64_t i = K;
    for (; i + K <= n; i += K) {
      prefetch_ahead<typename Op::In, kBytes>(x + i);
      for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
    }
    for (int k = 0; i + k < n; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
  } else {
    // Blocks of K * kLaneDepth elements; block results go through a cascade.
    constexpr int64_t B = K * kLaneDepth;
    if (n <= B) {
      for (int k = 0; k < K; ++k) acc[k] = Op::first(x[k], 0);
      int64_t i = K;
      for (; i + K <= n; i += K)
        for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
      for (int k = 0; i + k < n; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
    } else {
      Cascade<Op> cas(K);
      int64_t i = 0;
      while (i < n) {
        int64_t e = std::min(n, i + B);
        if (e - i >= K) {
          for (int k = 0; k < K; ++k) acc[k] = Op::first(x[i + k], 0);
          i += K;
        } else {
          for (int k = 0; k < K; ++k) acc[k] = P(0);
        }
        for (; i + K <= e; i += K) {
          prefetch_ahead<typename Op::In, std::max<int64_t>(64, K * sizeof(*x))>(x + i);
          for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
        }
        for (int k = 0; i + k < e; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
        i = e;
        cas.push(acc);
      }
      cas.result(acc);
    }
  }
  for (int w = K / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = Op::merge(acc[k], acc[k + w]);
  return acc[0];
}

template <class Op>
typename Op::P seq_run(const typename Op::In* x, int64_t n, int64_t idx0) {
  typename Op::P a = Op::first(x[0], idx0);
  for (int64_t i = 1; i < n; ++i) a = Op::step(a, x[i], idx0 + i);
  return a;
}

// Four accumulators in named variables (they stay in registers; a short
// array of lanes gets folded through the stack), n >= 4.
template <class Op>
typename Op::P quad_run(const typename Op::In* __restrict x, int64_t n) {
  typename Op::P a0 = Op::first(x[0], 0), a1 = Op::first(x[1], 0), a2 = Op::first(x[2], 0), a3 = Op::first(x[3], 0);
  int64_t i = 4;
  for (; i + 4 <= n; i += 4) {
    a0 = Op::step(a0, x[i], 0);
    a1 = Op::step(a1, x[i + 1], 0);
    a2 = Op::step(a2, x[i + 2], 0);
    a3 = Op::step(a3, x[i + 3], 0);
  }
  if (i < n) a0 = Op::step(a0, x[i], 0);
  if (i + 1 < n) a1 = Op::step(a1, x[i + 1], 0);
  if (i + 2 < n) a2 = Op::step(a2, x[i + 2], 0);
  return Op::merge(Op::merge(a0, a2), Op::merge(a1, a3));
}

// Lanes: 8 vectors' worth for long runs, one vector's worth for short ones.
template <typename P>
inline constexpr int kWideLanes = std::max(16, 8 * kVecBytes / static_cast<int>(sizeof(P)));
template <typename P>
inline constexpr int kNarrowLanes = kWideLanes<P> / 8;

template <class Op>
typename Op::P lanes_run(const typename Op::In* x, int64_t n, int64_t idx0) {
  using P = typename Op::P;
  if (n >= 4 * kWideLanes<P>) return lane_run<Op, kWideLanes<P>>(x, n);
  if (n >= 2 * kNarrowLanes<P>) return lane_run<Op, kNarrowLanes<P>>(x, n);
  if (n >= 8) return quad_run<Op>(x, n);
  return seq_run<Op>(x, n, idx0);
}

// argmax of x[0, n), n >= 1: the maximum of each block by lanes, then a
// search for the first occurrence in the block that holds it.
template <typename T>
ArgP<T> argmax_run(const T* x, int64_t n, int64_t idx0) {
  using Op = ArgmaxOp<T>;
  constexpr int64_t kBlock = 1024;
  if (n < 32) return seq_run<Op>(x, n, idx0);
  T best = x[0];
  int64_t best_block = -1;
  for (int64_t b = 0; b < n; b += kBlock) {
    T m = lanes_run<MaxMinOp<T, true>>(x + b, std::min(kBlock, n - b), 0);
    if (best_block < 0 || Op::better(m, best)) {
      best = m;
      best_block = b;
    }
    if (is_nan(best)) break;
  }
  int64_t e = std::min(n, best_block + kBlock), i = best_block;
  if (is_nan(best)) {
    while (i < e && !is_nan(x[i])) ++i;
  } else {
    while (i < e && !(x[i] == best)) ++i;
  }
  return {best, idx0 + i};
}

template <class Op>
typename Op::P run(const typename Op::In* x, int64_t n, int64_t idx0) {
  if constexpr (Op::kIndexed) return argmax_run(x, n, idx0);
  else return lanes_run<Op>(x, n, idx0);
}

// ---- layout --------------------------------------------------------------------------

struct Group {
  int64_t size, stride;
};

// Walks a row-major index over groups, tracking the input offset.
struct Odometer {
  int n = 0;
  int64_t size[kMaxGroups], stride[kMaxGroups], idx[kMaxGroups];
  int64_t off = 0;

  Odometer(const std::vector<Group>& g, size_t count) : n(static_cast<int>(count)) {
    for (int d = 0; d < n; ++d) {
      size[d] = g[d].size;
      stride[d] = g[d].stride;
      idx[d] = 0;
    }
  }
  void seek(int64_t flat) {
    off = 0;
    for (int d = n - 1; d >= 0; --d) {
      idx[d] = flat % size[d];
      flat /= size[d];
      off += idx[d] * stride[d];
    }
  }
  void next() {
    for (int d = n - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < size[d]) return;
      off -= size[d] * stride[d];
      idx[d] = 0;
    }
  }
};

struct ReduceLayout {
  std::vector<Group> kept, red;  // outer to inner, input strides
  bool last_reduced = false;
  int64_t out_numel = 1, count = 1;
};

ReduceLayout make_layout(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduce(shape.size(), false);
  for (int64_t a : axes) reduce[static_cast<size_t>(a)] = true;
  ReduceLayout l;
  std::vector<int64_t> sizes;
  std::vector<bool> flags;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reduce[i]) l.count *= shape[i];
    else l.out_numel *= shape[i];
    if (shape[i] == 1) continue;
    if (!flags.empty() && flags.back() == reduce[i]) {
      sizes.back() *= shape[i];
    } else {
      sizes.push_back(shape[i]);
      flags.push_back(reduce[i]);
    }
  }
  if (sizes.size() > kMaxGroups) throw ShapeError("reduction over more than 64 alternating groups of dims");
  int64_t stride = 1;
  std::vector<Group> groups(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    groups[i] = {sizes[i], stride};
    stride *= sizes[i];
  }
  for (size_t i = 0; i < groups.size(); ++i) (flags[i] ? l.red : l.kept).push_back(groups[i]);
  l.last_reduced = !flags.empty() && flags.back();
  return l;
}

// ---- the two loops ---------------------------------------------------------------------

// acc[j] = step(acc[j], row[j]) or first(row[j]).
template <class Op>
void row_first(typename Op::P* __restrict acc, const typename Op::In* __restrict row, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::first(row[j], r);
}
template <class Op>
void row_step(typename Op::P* __restrict acc, const typename Op::In* __restrict row, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::step(acc[j], row[j], r);
}

// Four rows at a time: a quarter of the loads and stores of the tile.
template <class Op>
void row_step4(typename Op::P* __restrict acc, const typename Op::In* __restrict a, const typename Op::In* __restrict b,
               const typename Op::In* __restrict c, const typename Op::In* __restrict d, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j)
    acc[j] = Op::step(Op::step(Op::step(Op::step(acc[j], a[j], r), b[j], r + 1), c[j], r + 2), d[j], r + 3);
}

// tile[0, n) op= rows [r, e) from `base`; the odometer is at row r.
template <class Op>
void rows_step(typename Op::P* tile, const typename Op::In* base, Odometer& ro, int64_t r, int64_t e, int64_t n) {
  for (; r + 4 <= e; r += 4) {
    const typename Op::In* a = base + ro.off;
    ro.next();
    const typename Op::In* b = base + ro.off;
    ro.next();
    const typename Op::In* c = base + ro.off;
    ro.next();
    const typename Op::In* d = base + ro.off;
    ro.next();
    row_step4<Op>(tile, a, b, c, d, n, r);
  }
  for (; r < e; ++r, ro.next()) row_step<Op>(tile, base + ro.off, n, r);
}

// argmax of rows: values and row numbers in separate arrays (row numbers
// relative to r0, as wide as the values), four rows per pass, so the select
// loop vectorizes. The loop compares with '>' only and flags columns that
// saw a nan; flagged columns are rescanned for their first nan afterwards
// (nan-aware compares in a chain of selects keep GCC from vectorizing).
template <typename T>
void argmax_rows(const T* base, Odometer& ro, int64_t r0, int64_t r1, int64_t n, ArgP<T>* tile) {
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr int64_t kMax = kColTileBytes / sizeof(ArgP<T>);
  T v[kMax];
  I idx[kMax];
  I nan[kFloat ? kMax : 1];
  const Odometer start = ro;
  {
    const T* __restrict x = base + ro.off;
    for (int64_t j = 0; j < n; ++j) {
      v[j] = x[j];
      idx[j] = 0;
      if constexpr (kFloat) nan[j] = x[j] != x[j];
    }
    ro.next();
  }
  int64_t r = r0 + 1;
  for (; r + 4 <= r1; r += 4) {
    const T* __restrict x0 = base + ro.off;
    ro.next();
    const T* __restrict x1 = base + ro.off;
    ro.next();
    const T* __restrict x2 = base + ro.off;
    ro.next();
    const T* __restrict x3 = base + ro.off;
    ro.next();
    const I rr = static_cast<I>(r - r0);
    for (int64_t j = 0; j < n; ++j) {
      const T a = x0[j], b = x1[j], c = x2[j], d = x3[j];
      T best = v[j];
      I at = idx[j];
      bool g = a > best;
      best = g ? a : best;
      at = g ? rr : at;
      g = b > best;
      best = g ? b : best;
      at = g ? static_cast<I>(rr + 1) : at;
      g = c > best;
      best = g ? c : best;
      at = g ? static_cast<I>(rr + 2) : at;
      g = d > best;
      best = g ? d : best;
      at = g ? static_cast<I>(rr + 3) : at;
      v[j] = best;
      idx[j] = at;
      if constexpr (kFloat) nan[j] |= static_cast<I>((a != a) | (b != b) | (c != c) | (d != d));
    }
  }
  for (; r < r1; ++r, ro.next()) {
    const T* __restrict x = base + ro.off;
    const I rr = static_cast<I>(r - r0);
    for (int64_t j = 0; j < n; ++j) {
      const T a = x[j];
      const bool g = a > v[j];
      v[j] = g ? a : v[j];
      idx[j] = g ? rr : idx[j];
      if constexpr (kFloat) nan[j] |= static_cast<I>(a != a);
    }
  }
  if constexpr (kFloat) {
    std::vector<int64_t> cols;
    for (int64_t j = 0; j < n; ++j)
      if (nan[j]) cols.push_back(j);
    Odometer w = start;
    for (int64_t q = r0; q < r1 && !cols.empty(); ++q, w.next()) {
      const T* x = base + w.off;
      for (size_t c = 0; c < cols.size();) {
        const int64_t j = cols[c];
        if (x[j] != x[j]) {
          v[j] = x[j];
          idx[j] = static_cast<I>(q - r0);
          cols[c] = cols.back();
          cols.pop_back();
        } else {
          ++c;
        }
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) tile[j] = {v[j], r0 + idx[j]};
}

// tile[0, n) = reduction of rows [r0, r1) (at least one), columns [0, n)
// from `base`; the odometer is seeked to r0.
template <class Op>
void rows_unit(const typename Op::In* base, Odometer& ro, int64_t r0, int64_t r1, int64_t n, typename Op::P* tile) {
  if constexpr (Op::kIndexed) {
    argmax_rows(base, ro, r0, r1, n, tile);
    return;
  }
  if (!Op::kPairwise || r1 - r0 <= kRowBlock) {
    row_first<Op>(tile, base + ro.off, n, r0);
    ro.next();
    rows_step<Op>(tile, base, ro, r0 + 1, r1, n);
    return;
  }
  if constexpr (Op::kPairwise) {
    Cascade<Op> cas(n);
    for (int64_t b = r0; b < r1; b += kRowBlock) {
      const int64_t e = std::min(r1, b + kRowBlock);
      row_first<Op>(tile, base + ro.off, n, b);
      ro.next();
      rows_step<Op>(tile, base, ro, b + 1, e, n);
      cas.push(tile);
    }
    cas.result(tile);
  }
}

// out[o] = reduction of x[o * L, (o + 1) * L) for o in [b, e).
template <class Op, int L>
void short_rows(const typename Op::In* __restrict x, typename Op::Out* __restrict out, int64_t b, int64_t e) {
  for (int64_t o = b; o < e; ++o) {
    typename Op::P a = Op::first(x[o * L], 0);
    for (int l = 1; l < L; ++l) a = Op::step(a, x[o * L + l], l);
    out[o] = Op::finish(a, L);
  }
}

// Innermost group reduced: output o reduces pieces of at most kChunk
// contiguous elements; consecutive pieces form units of about kChunk.
template <class Op>
void reduce_inner(const ReduceLayout& l, const typename Op::In* in, typename Op::Out* out) {
  using P = typename Op::P;
  const int64_t L = l.red.back().size;
  const size_t nrp = l.red.size() - 1;  // the other reduced groups
  const int64_t C = (L + kChunk - 1) / kChunk;
  const int64_t npieces = (l.count / L) * C;
  const int64_t G = L >= kChunk ? 1 : kChunk / L;
  const int64_t S = (npieces + G - 1) / G;
  const int64_t O = l.out_numel;

  auto unit = [&](int64_t base, int64_t s) -> P {
    if (npieces == 1) return run<Op>(in + base, L, 0);
    const int64_t p0 = s * G, p1 = std::min(npieces, p0 + G);
    if (L < kSmallRow) {
      // Short runs under outer reduced dims: accumulate the runs as rows of
      // L columns, then fold the columns.
      P tile[kSmallRow];
      Odometer ro(l.red, nrp);
      ro.seek(p0);
      rows_unit<Op>(in + base, ro, p0, p1, L, tile);
      if constexpr (Op::kIndexed)
        for (int64_t j = 0; j < L; ++j) tile[j].i = tile[j].i * L + j;
      P acc = tile[0];
      for (int64_t j = 1; j < L; ++j) acc = merge_lanes<Op>(acc, tile[j]);
      return acc;
    }
    Odometer ro(l.red, nrp);
    int64_t rp = p0 / C, c = p0 % C;
    ro.seek(rp);
    ScalarCascade<Op> cas;
    P acc{};
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t start = c * kChunk;
      P part = run<Op>(in + base + ro.off + start, std::min(kChunk, L - start), rp * L + start);
      if constexpr (Op::kPairwise) cas.push(part);
      else acc = p == p0 ? part : Op::merge(acc, part);
      if (++c == C) {
        c = 0;
        ++rp;
        ro.next();
      }
    }
    if constexpr (Op::kPairwise) return cas.result();
    else return acc;
  };

  if (S == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrain / l.count);
    if (nrp == 0) {  // the kept dims merged into one: output o reduces x[o * L, (o + 1) * L)
      parallel_for(O, grain, [&](int64_t b, int64_t e) {
        const typename Op::In* const x = in;
        typename Op::Out* const y = out;
        const int64_t n = L;
        if constexpr (!Op::kIndexed) {
          switch (n) {  // short rows: vectorized across outputs
            case 2: short_rows<Op, 2>(x, y, b, e); return;
            case 3: short_rows<Op, 3>(x, y, b, e); return;
            case 4: short_rows<Op, 4>(x, y, b, e); return;
            case 8: short_rows<Op, 8>(x, y, b, e); return;
            default: break;
          }
        }
        for (int64_t o = b; o < e; ++o) y[o] = Op::finish(run<Op>(x + o * n, n, 0), n);
      });
      return;
    }
    parallel_for(O, grain, [&](int64_t b, int64_t e) {
      Odometer ko(l.kept, l.kept.size());
      ko.seek(b);
      for (int64_t o = b; o < e; ++o, ko.next()) out[o] = Op::finish(unit(ko.off, 0), l.count);
    });
    return;
  }
  std::unique_ptr<P[]> parts(new P[static_cast<size_t>(O * S)]);
  parallel_for(O * S, 1, [&](int64_t b, int64_t e) {
    Odometer ko(l.kept, l.kept.size());
    for (int64_t u = b; u < e; ++u) {
      ko.seek(u / S);
      parts[static_cast<size_t>(u)] = unit(ko.off, u % S);
    }
  });
  for (int64_t o = 0; o < O; ++o) {
    P* p = &parts[static_cast<size_t>(o * S)];
    tree_merge<Op>(p, S, 1, 1);
    out[o] = Op::finish(p[0], l.count);
  }
}

// Rows of J < kSmallRow contiguous elements, one after another: reduced as
// one flat stream of W = J * m lanes, lane t feeding column t % J.
template <class Op>
void flat_unit(const typename Op::In* __restrict x, int64_t rows, int64_t J, typename Op::P* tile) {
  using P = typename Op::P;
  constexpr int64_t kTarget = kWideLanes<P>;
  const int64_t W = J * ((kTarget + J - 1) / J);
  const int64_t n = rows * J;
  if (n < 2 * W) {  // too short for lanes
    row_first<Op>(tile, x, J, 0);
    for (int64_t i = J; i < n; i += J) row_step<Op>(tile, x + i, J, 0);
    return;
  }
  P acc[kTarget + kSmallRow];
  auto block = [&](int64_t i, int64_t e) {
    for (int64_t t = 0; t < W; ++t) acc[t] = Op::first(x[i + t], 0);
    for (i += W; i + W <= e; i += W)
      for (int64_t t = 0; t < W; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
    for (int64_t t = 0; i + t < e; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
  };
  if constexpr (Op::kPairwise) {
    const int64_t B = W * kLaneDepth;
    Cascade<Op> cas(W);
    for (int64_t i = 0; i < n; i += B) {
      int64_t e = std::min(n, i + B);
      if (e - i < W) {  // a short last block: fold it into lanes starting from zero
        for (int64_t t = 0; t < W; ++t) acc[t] = P(0);
        for (int64_t t = 0; i + t < e; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
      } else {
        block(i, e);
      }
      cas.push(acc);
    }
    cas.result(acc);
  } else {
    block(0, n);
  }
  for (int64_t j = 0; j < J; ++j) tile[j] = acc[j];
  for (int64_t t = J; t < W; t += J)
    for (int64_t j = 0; j < J; ++j) tile[j] = Op::merge(tile[j], acc[t + j]);
}

// Innermost group kept: out[o', j] reduces x[o', r, j] over the reduced
// rows r, in column tiles and row units.
template <class Op>
void reduce_outer(const ReduceLayout& l, const typename Op::In* in, typename Op::Out* out) {
  using P = typename Op::P;
  const int64_t J = l.kept.back().size;
  const size_t nkp = l.kept.size() - 1;  // the other kept groups
  const int64_t R = l.count;
  const bool flat = !Op::kIndexed && l.red.size() == 1 && l.red[0].stride == J && J < kSmallRow;
  const int64_t Jt = flat ? J : std::min<int64_t>(J, kColTileBytes / sizeof(P));
  const int64_t nJt = (J + Jt - 1) / Jt;
  const int64_t G = std::max<int64_t>(1, (flat ? kChunk : kOuterChunk) / Jt);
  const int64_t S = (R + G - 1) / G;
  const int64_t Op_ = l.out_numel / J;
  const int64_t units = Op_ * nJt * S;

  // Fills tile with unit u's partial result; returns its width.
  auto unit = [&](int64_t u, Odometer& ko, P* tile) -> int64_t {
    const int64_t s = u % S, jt = (u / S) % nJt, o = u / (S * nJt);
    ko.seek(o);
    const int64_t j0 = jt * Jt, n = std::min(Jt, J - j0);
    const int64_t r0 = s * G, r1 = std::min(R, r0 + G);
    const typename Op::In* base = in + ko.off + j0;
    if (flat) {
      flat_unit<Op>(base + r0 * J, r1 - r0, J, tile);
    } else {
      Odometer ro(l.red, l.red.size());
      ro.seek(r0);
      rows_unit<Op>(base, ro, r0, r1, n, tile);
    }
    return n;
  };

  if (S == 1) {
    parallel_for(units, std::max<int64_t>(1, kGrain / (R * Jt)), [&](int64_t b, int64_t e) {
      Odometer ko(l.kept, nkp);
      std::unique_ptr<P[]> tile(new P[static_cast<size_t>(Jt)]);
      for (int64_t u = b; u < e; ++u) {
        int64_t n = unit(u, ko, tile.get());
        typename Op::Out* o = out + (u / nJt) * J + (u % nJt) * Jt;
        for (int64_t j = 0; j < n; ++j) o[j] = Op::finish(tile[static_cast<size_t>(j)], R);
      }
    });
    return;
  }
  std::unique_ptr<P[]> parts(new P[static_cast<size_t>(units * Jt)]);
  parallel_for(units, 1, [&](int64_t b, int64_t e) {
    Odometer ko(l.kept, nkp);
    for (int64_t u = b; u < e; ++u) unit(u, ko, &parts[static_cast<size_t>(u * Jt)]);
  });
  parallel_for(Op_ * nJt, std::max<int64_t>(1, kGrain / (S * Jt)), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      P* p = &parts[static_cast<size_t>(g * S * Jt)];
      const int64_t n = std::min(Jt, J - (g % nJt) * Jt);
      tree_merge<Op>(p, S, Jt, n);
      typename Op::Out* o = out + (g / nJt) * J + (g % nJt) * Jt;
      for (int64_t j = 0; j < n; ++j) o[j] = Op::finish(p[j], R);
    }
  });
}

template <class Op>
void reduce(const KernelContext& ctx) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.dtype != dtype_of<Out>())
    throw DTypeError("precompiled '" + ctx.op.name() + "' kernel: unexpected output dtype " +
                     std::string(dtype_name(y.dtype)));
  const ReduceLayout l = make_layout(*x.shape, ctx.attrs.get_ints("axes"));
  const In* in = x.as<In>();
  Out* out = y.as<Out>();
  if (l.out_numel == 0) return;
  if (l.count == 0) {
    const Out v = Op::empty();
    parallel_for(l.out_numel, kElementwiseGrain, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
    return;
  }
  if (l.red.empty()) {  // every reduced dim has size 1: one element per output
    parallel_for(l.out_numel, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = Op::finish(Op::first(in[i], 0), 1);
    });
    return;
  }
  if (l.last_reduced) reduce_inner<Op>(l, in, out);
  else reduce_outer<Op>(l, in, out);
}

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

void sum_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<SumOp<T, acc_t<T>, acc_t<T>>>(ctx);
  });
}

// Means of bool and int32 sum exactly in int64; int64 sums in double (no
// overflow) and floats in their own type; the division is in double except
// for floats, which divide in their own type.
void mean_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using Out = float_result_t<T>;
    using P = std::conditional_t<std::is_same_v<T, int64_t>, double, acc_t<T>>;
    reduce<MeanOp<T, P, Out>>(ctx);
  });
}

void prod_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<ProdOp<T, acc_t<T>>>(ctx);
  });
}

template <bool kMax>
void maxmin_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<MaxMinOp<T, kMax>>(ctx);
  });
}

void argmax_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<ArgmaxOp<T>>(ctx);
  });
}

}  // namespace

void register_reduction_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("sum", cpu, sum_kernel);
  r.add_kernel("mean", cpu, mean_kernel);
  r.add_kernel("max", cpu, maxmin_kernel<true>);
  r.add_kernel("min", cpu, maxmin_kernel<false>);
  r.add_kernel("prod", cpu, prod_kernel);
  r.add_kernel("argmax", cpu, argmax_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
