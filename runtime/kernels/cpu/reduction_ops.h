// The precompiled reductions' ops (how each starts, folds, merges and
// finishes), the pairwise cascades that merge partial sums, and the tuning
// constants of the loops in reduction_kernels.cpp.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/wrapping.h"

namespace wok::cpu::WOK_ISA_NS {

// Private to reduction_kernels.cpp (internal linkage, as when these lived
// there): one copy per instruction-set build.
namespace {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

// Elements of one work unit (see Note [Deterministic splitting] in
// reduction_kernels.cpp).
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
  // The identity (ONNX): -inf / +inf, an integer's lowest / highest, false / true.
  static Out empty() {
    if constexpr (std::is_floating_point_v<T>)
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
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

}  // namespace

}  // namespace wok::cpu::WOK_ISA_NS
