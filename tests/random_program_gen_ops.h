// The op families of the random programs' generator (random_program_gen.h):
// each adds one random op of its family, with its code, its step and its
// reference value; separate from the generator's inputs and bookkeeping.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "random_program_gen.h"

namespace rpgen {

inline int Generator::unary(U op, int a) {
  std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ")";
  return push(expr, [op, a](const std::vector<Tensor>& v) { return apply_unary(op, v[a]); },
              [&](const Tensor& y) { return rp::ref_unary(op, RV(a), y.dtype()); });
}

inline Tensor Generator::apply_unary(U op, const Tensor& x) {
  switch (op) {
    case U::kNeg: return wok::neg(x);
    case U::kAbs: return wok::abs(x);
    case U::kExp: return wok::exp(x);
    case U::kLog: return wok::log(x);
    case U::kSqrt: return wok::sqrt(x);
    case U::kRsqrt: return wok::rsqrt(x);
    case U::kSin: return wok::sin(x);
    case U::kCos: return wok::cos(x);
    case U::kTanh: return wok::tanh(x);
    case U::kErf: return wok::erf(x);
    case U::kSigmoid: return wok::sigmoid(x);
    case U::kRelu: return wok::relu(x);
    case U::kGelu: return wok::gelu(x);
    case U::kSilu: return wok::silu(x);
    case U::kFloor: return wok::floor(x);
    case U::kCeil: return wok::ceil(x);
    case U::kRound: return wok::round(x);
    case U::kReciprocal: return wok::reciprocal(x);
    case U::kSquare: return wok::square(x);
    case U::kLogicalNot: break;
  }
  return wok::logical_not(x);
}

inline Tensor Generator::apply_binary(B op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case B::kAdd: return wok::add(a, b);
    case B::kSub: return wok::sub(a, b);
    case B::kMul: return wok::mul(a, b);
    case B::kDiv: return wok::div(a, b);
    case B::kPow: return wok::pow(a, b);
    case B::kMax: return wok::maximum(a, b);
    case B::kMin: return wok::minimum(a, b);
    case B::kEq: return wok::eq(a, b);
    case B::kNe: return wok::ne(a, b);
    case B::kLt: return wok::lt(a, b);
    case B::kLe: return wok::le(a, b);
    case B::kGt: return wok::gt(a, b);
    case B::kGe: return wok::ge(a, b);
    case B::kAnd: return wok::logical_and(a, b);
    case B::kOr: break;
  }
  return wok::logical_or(a, b);
}

inline int Generator::binary(B op, int a, int b) {
  std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ", " + T(b) + ")";
  return push(expr, [op, a, b](const std::vector<Tensor>& v) { return apply_binary(op, v[a], v[b]); },
              [&](const Tensor& y) { return rp::ref_binary(op, RV(a), RV(b), y.dtype()); });
}

// a op (a plain number, weakly typed: it takes a's dtype when a is a float).
inline int Generator::binary_scalar(B op, int a, double s) {
  if (!V(a).defined() || !rp::is_f(V(a).dtype())) return -1;
  std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ", " + num_code(s, false) + ")";
  return push(expr, [op, a, s](const std::vector<Tensor>& v) { return apply_binary_scalar(op, v[a], s); },
              [&](const Tensor& y) { return rp::ref_binary(op, RV(a), rp::ref_scalar(y.dtype(), s), y.dtype()); });
}

inline Tensor Generator::apply_binary_scalar(B op, const Tensor& a, double s) {
  switch (op) {
    case B::kAdd: return wok::add(a, s);
    case B::kMul: return wok::mul(a, s);
    default: break;
  }
  return wok::sub(a, s);
}

inline void Generator::op_unary(int a) {
  if (flavour_ == Flavour::kInteger) {
    U ops[] = {U::kNeg, U::kAbs, U::kRelu, U::kSquare, U::kLogicalNot, U::kFloor};
    unary(ops[pick(0, 5)], a);
    return;
  }
  if (flavour_ == Flavour::kMixed) {
    unary(static_cast<U>(pick(0, 19)), a);
    return;
  }
  // Continuous: keep arguments where the functions are well conditioned.
  const bool fa = rp::is_f(V(a).dtype());
  int c = pick(0, 18);
  switch (c) {
    case 0: {  // exp(3 tanh(x))
      int t = unary(U::kTanh, a);
      if (t >= 0 && (t = binary_scalar(B::kMul, t, 3.0)) >= 0) unary(U::kExp, t);
      return;
    }
    case 1: {  // log(|x| + 1)
      int t = unary(U::kAbs, a);
      if (t >= 0 && (t = binary_scalar(B::kAdd, t, 1.0)) >= 0) unary(U::kLog, t);
      return;
    }
    case 2: {  // sqrt(|x|)
      int t = unary(U::kAbs, a);
      if (t >= 0) unary(U::kSqrt, t);
      return;
    }
    case 3:
    case 4: {  // rsqrt(|x| + 0.5), reciprocal(|x| + 0.5)
      int t = unary(U::kAbs, a);
      if (t >= 0 && (t = binary_scalar(B::kAdd, t, 0.5)) >= 0) unary(c == 3 ? U::kRsqrt : U::kReciprocal, t);
      return;
    }
    case 5: {  // (4 tanh(x))^2
      int t = unary(U::kTanh, a);
      if (t >= 0 && (t = binary_scalar(B::kMul, t, 4.0)) >= 0) unary(U::kSquare, t);
      return;
    }
    case 6: {  // floor / ceil / round of 2.5 x
      int t = fa ? binary_scalar(B::kMul, a, 2.5) : a;
      U r[] = {U::kFloor, U::kCeil, U::kRound};
      if (t >= 0) unary(r[pick(0, 2)], t);
      return;
    }
    default: {
      U ops[] = {U::kTanh, U::kSigmoid, U::kSin, U::kCos, U::kErf, U::kGelu, U::kSilu, U::kNeg, U::kAbs, U::kRelu, U::kSquare, U::kTanh};
      unary(ops[c - 7], a);
      return;
    }
  }
}

inline void Generator::op_binary(int a) {
  int b = partner(a);
  if (b < 0) return;
  if (flavour_ == Flavour::kMixed) {
    B ops[] = {B::kAdd, B::kSub, B::kMul, B::kDiv, B::kPow, B::kMax, B::kMin, B::kAnd, B::kOr};
    binary(ops[pick(0, 8)], a, b);
    return;
  }
  B ops[] = {B::kAdd, B::kSub, B::kMul, B::kMax, B::kMin, B::kDiv};
  B op = ops[pick(0, flavour_ == Flavour::kContinuous ? 5 : 4)];
  if (op == B::kDiv) {  // a / (|b| + 1)
    int t = unary(U::kAbs, b);
    if (t >= 0 && (t = binary_scalar(B::kAdd, t, 1.0)) >= 0) binary(B::kDiv, a, t);
    return;
  }
  if (flavour_ == Flavour::kInteger && op == B::kMul && chance(2)) {  // logical ops too
    binary(chance(2) ? B::kAnd : B::kOr, a, b);
    return;
  }
  binary(op, a, b);
}

inline void Generator::op_where(int a) {
  int b = partner(a);
  if (b < 0) return;
  B cmps[] = {B::kEq, B::kNe, B::kLt, B::kLe, B::kGt, B::kGe};
  int c = binary(cmps[pick(0, 5)], a, b);
  if (c < 0 || chance(4)) return;
  int x = chance(2) ? a : b, z = chance(2) ? b : partner(a);
  if (z < 0) return;
  push("wok::where(" + T(c) + ", " + T(x) + ", " + T(z) + ")",
       [c, x, z](const std::vector<Tensor>& v) { return wok::where(v[c], v[x], v[z]); },
       [&](const Tensor& y) { return rp::ref_where(RV(c), RV(x), RV(z), y.dtype()); });
}

inline void Generator::op_clamp(int a) {
  const bool f = rp::is_f(V(a).dtype());
  // Unsigned bounds stay >= 0 (a negative one would convert to a large value).
  const int lowest = wok::is_unsigned(V(a).dtype()) ? 0 : -30;
  double lo = f ? pick(-6, 2) * 0.25 : pick(lowest, 5), hi = f ? lo + pick(0, 8) * 0.25 : lo + pick(0, 40);
  push("wok::clamp(" + T(a) + ", " + num_code(lo, false) + ", " + num_code(hi, false) + ")",
       [a, lo, hi](const std::vector<Tensor>& v) { return wok::clamp(v[a], lo, hi); },
       [&](const Tensor&) { return rp::ref_clamp(RV(a), lo, hi); });
}

inline void Generator::op_cast(int a) {
  DType t;
  if (flavour_ == Flavour::kContinuous) t = continuous_dtype();
  else if (flavour_ == Flavour::kInteger) t = kProgramDTypes[pick(0, kIntegerDTypes - 1)];
  else t = kProgramDTypes[pick(0, kAllDTypes - 1)];
  push("wok::cast(" + T(a) + ", " + dtype_code(t) + ")", [a, t](const std::vector<Tensor>& v) { return wok::cast(v[a], t); },
       [&](const Tensor&) { return rp::ref_cast(RV(a), t); });
}

inline void Generator::op_reduce(int a) {
  const int rank = V(a).ndim();
  R kind = static_cast<R>(pick(0, 5));
  // Random axes, some negative; none means every axis.
  std::vector<int64_t> axes, canon;
  for (int d = 0; d < rank; ++d)
    if (chance(2)) axes.push_back(chance(3) ? d - rank : d);
  if (!axes.empty() && chance(4)) std::swap(axes.front(), axes.back());  // any order
  if (axes.empty() && rank > 0 && chance(2))
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t x : axes) canon.push_back(x < 0 ? x + rank : x);
  std::sort(canon.begin(), canon.end());
  if (canon.empty())
    for (int d = 0; d < rank; ++d) canon.push_back(d);
  const bool keep = chance(2);
  int64_t count = 1;
  for (int64_t d : canon) count *= V(a).shape()[d];
  if (kind == R::kProd && flavour_ == Flavour::kContinuous && count > 16) kind = R::kSum;  // keep products in range
  std::string expr = std::string("wok::") + rp::name(kind) + "(" + T(a) + ", " + ints_code(axes) + ", " +
                     (keep ? "true" : "false") + ")";
  push(expr,
       [kind, a, axes, keep](const std::vector<Tensor>& v) {
         switch (kind) {
           case R::kSum: return wok::sum(v[a], axes, keep);
           case R::kMean: return wok::mean(v[a], axes, keep);
           case R::kMax: return wok::max(v[a], axes, keep);
           case R::kMin: return wok::min(v[a], axes, keep);
           case R::kProd: return wok::prod(v[a], axes, keep);
           case R::kArgmax: break;
         }
         return wok::argmax(v[a], axes, keep);
       },
       [&](const Tensor& y) { return rp::ref_reduce(kind, RV(a), canon, keep, y.dtype()); });
}

inline void Generator::op_norm(int a) {
  const int rank = V(a).ndim();
  if (rank == 0) return;
  const int64_t last = V(a).shape().back();
  DType wt = flavour_ == Flavour::kMixed ? kProgramDTypes[pick(0, kAllDTypes - 1)] : continuous_dtype();
  switch (pick(0, 3)) {
    case 0:
    case 1: {
      const bool log = chance(2);
      int64_t axis = pick(-rank, rank - 1);
      std::string expr = std::string(log ? "wok::log_softmax(" : "wok::softmax(") + T(a) + ", " + std::to_string(axis) + ")";
      push(expr,
           [a, axis, log](const std::vector<Tensor>& v) { return log ? wok::log_softmax(v[a], axis) : wok::softmax(v[a], axis); },
           [&](const Tensor&) { return rp::ref_softmax(RV(a), axis, log); });
      return;
    }
    case 2: {
      int w = chance(2) ? fresh_input({last}, wt) : -1, b = chance(2) ? fresh_input({last}, wt) : -1;
      std::string expr = "wok::layer_norm(" + T(a) + ", " + (w >= 0 ? T(w) : "{}") + ", " + (b >= 0 ? T(b) : "{}") + ")";
      push(expr,
           [a, w, b](const std::vector<Tensor>& v) {
             return wok::layer_norm(v[a], w >= 0 ? v[w] : Tensor(), b >= 0 ? v[b] : Tensor());
           },
           [&](const Tensor&) { return rp::ref_layer_norm(RV(a), w >= 0 ? &RV(w) : nullptr, b >= 0 ? &RV(b) : nullptr, 1e-5); });
      return;
    }
    default: {
      int w = chance(2) ? fresh_input({last}, wt) : -1;
      std::string expr = "wok::rms_norm(" + T(a) + ", " + (w >= 0 ? T(w) : "{}") + ")";
      push(expr, [a, w](const std::vector<Tensor>& v) { return wok::rms_norm(v[a], w >= 0 ? v[w] : Tensor()); },
           [&](const Tensor&) { return rp::ref_rms_norm(RV(a), w >= 0 ? &RV(w) : nullptr, 1e-6); });
      return;
    }
  }
}

inline void Generator::op_matmul(int a) {
  const Shape sa = V(a).shape();
  if (sa.empty()) return;
  const int64_t k = sa.back();
  if (sa.size() >= 2 && chance(4)) {  // a @ a^T
    push("wok::matmul(" + T(a) + ", wok::transpose(" + T(a) + ", -1, -2))",
         [a](const std::vector<Tensor>& v) { return wok::matmul(v[a], wok::transpose(v[a], -1, -2)); },
         [&](const Tensor& y) {
           const Val& x = RV(a);
           std::vector<int64_t> dims(x.shape.size());
           std::iota(dims.begin(), dims.end(), 0);
           std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
           return rp::ref_matmul(x, rp::ref_permute(x, dims), y.dtype());
         });
    return;
  }
  Shape sb;
  if (chance(5)) sb = {k};  // matrix-vector
  else {
    if (sa.size() > 2 && chance(2)) {  // batch dims, some broadcast
      sb.assign(sa.begin(), sa.end() - 2);
      for (auto& d : sb)
        if (chance(3)) d = 1;
      if (chance(3)) sb.erase(sb.begin());
    }
    sb.push_back(k);
    sb.push_back(chance(8) ? 0 : pick(1, 6));
  }
  int b = fresh_input(sb);
  if (b < 0) return;
  push("wok::matmul(" + T(a) + ", " + T(b) + ")", [a, b](const std::vector<Tensor>& v) { return wok::matmul(v[a], v[b]); },
       [&](const Tensor& y) { return rp::ref_matmul(RV(a), RV(b), y.dtype()); });
}

inline Shape Generator::factor_shape(int64_t count) {
  int rank = pick(1, 4);
  Shape s(rank, 1);
  if (count == 0) {
    for (auto& d : s) d = pick(1, 3);
    s[pick(0, rank - 1)] = 0;
    return s;
  }
  int64_t rest = count;
  for (int64_t f = 2; rest > 1;) {
    if (rest % f == 0) {
      s[pick(0, rank - 1)] *= f;
      rest /= f;
    } else {
      ++f;
    }
  }
  return s;
}

inline void Generator::op_movement(int a) {
  const Shape sa = V(a).shape();
  const int rank = static_cast<int>(sa.size());
  switch (pick(0, 7)) {
    case 0: {  // reshape, sometimes with an inferred dim
      Shape s = factor_shape(wok::numel(sa));
      Shape given = s;
      if (wok::numel(sa) > 0 && chance(3)) given[pick(0, static_cast<int>(s.size()) - 1)] = -1;
      push("wok::reshape(" + T(a) + ", " + ints_code(given) + ")",
           [a, given](const std::vector<Tensor>& v) { return wok::reshape(v[a], given); },
           [&](const Tensor&) { return rp::ref_reshape(RV(a), given); });
      return;
    }
    case 1: {  // permute
      std::vector<int64_t> dims(rank);
      std::iota(dims.begin(), dims.end(), 0);
      std::shuffle(dims.begin(), dims.end(), rng_);
      push("wok::permute(" + T(a) + ", " + ints_code(dims) + ")",
           [a, dims](const std::vector<Tensor>& v) { return wok::permute(v[a], dims); },
           [&](const Tensor&) { return rp::ref_permute(RV(a), dims); });
      return;
    }
    case 2: {  // transpose: all dims, or two
      if (rank < 2 || chance(2)) {
        std::vector<int64_t> dims(rank);
        for (int d = 0; d < rank; ++d) dims[d] = rank - 1 - d;
        push("wok::transpose(" + T(a) + ")", [a](const std::vector<Tensor>& v) { return wok::transpose(v[a]); },
             [&, dims](const Tensor&) { return rp::ref_permute(RV(a), dims); });
        return;
      }
      int x = pick(0, rank - 1), z = pick(-rank, rank - 1);
      std::vector<int64_t> dims(rank);
      std::iota(dims.begin(), dims.end(), 0);
      std::swap(dims[x], dims[z < 0 ? z + rank : z]);
      push("wok::transpose(" + T(a) + ", " + std::to_string(x) + ", " + std::to_string(z) + ")",
           [a, x, z](const std::vector<Tensor>& v) { return wok::transpose(v[a], x, z); },
           [&, dims](const Tensor&) { return rp::ref_permute(RV(a), dims); });
      return;
    }
    case 3:
    case 4: {  // slice, Python rules
      if (rank == 0) return;
      int axis = pick(-rank, rank - 1);
      int64_t len = sa[axis < 0 ? axis + rank : axis];
      auto bound = [&]() -> std::optional<int64_t> {
        if (chance(4)) return std::nullopt;
        return pick(-static_cast<int>(len) - 2, static_cast<int>(len) + 2);
      };
      std::optional<int64_t> start = bound(), stop = bound();
      int64_t steps[] = {1, 1, 1, 2, 3, -1, -2};
      int64_t step = steps[pick(0, 6)];
      push("wok::slice(" + T(a) + ", " + std::to_string(axis) + ", " + opt_code(start) + ", " + opt_code(stop) + ", " +
               std::to_string(step) + ")",
           [a, axis, start, stop, step](const std::vector<Tensor>& v) { return wok::slice(v[a], axis, start, stop, step); },
           [&](const Tensor&) { return rp::ref_slice(RV(a), axis, start, stop, step); });
      return;
    }
    case 5:
    case 6: {  // concat with itself, or with inputs that differ along the axis
      if (rank == 0) return;
      int axis = pick(-rank, rank - 1);
      std::vector<int> parts = {a};
      int more = pick(1, 2);
      for (int k = 0; k < more; ++k) {
        if (chance(3)) parts.push_back(a);
        else {
          Shape s = sa;
          s[axis < 0 ? axis + rank : axis] = pick(0, 4);
          int b = fresh_input(s);
          if (b < 0) return;
          parts.push_back(b);
        }
      }
      if (chance(3)) std::swap(parts[0], parts.back());
      std::string list = "{";
      for (size_t k = 0; k < parts.size(); ++k) list += (k ? ", " : "") + T(parts[k]);
      list += "}";
      push("wok::concat(" + list + ", " + std::to_string(axis) + ")",
           [parts, axis](const std::vector<Tensor>& v) {
             std::vector<Tensor> xs;
             for (int i : parts) xs.push_back(v[i]);
             return wok::concat(xs, axis);
           },
           [&](const Tensor& y) {
             std::vector<const Val*> xs;
             for (int i : parts) xs.push_back(&RV(i));
             return rp::ref_concat(xs, axis, y.dtype());
           });
      return;
    }
    default: {  // broadcast_to: grow dims of 1, maybe add leading dims
      Shape s = sa;
      for (auto& d : s)
        if (d == 1 && chance(2)) d = pick(0, 4) == 0 ? 0 : pick(2, 4);
      if (chance(2)) s.insert(s.begin(), pick(1, 3));
      if (s.size() > 4) s.erase(s.begin());
      if (s.size() < sa.size()) return;
      push("wok::broadcast_to(" + T(a) + ", " + ints_code(s) + ")",
           [a, s](const std::vector<Tensor>& v) { return wok::broadcast_to(v[a], s); },
           [&](const Tensor&) { return rp::ref_broadcast_to(RV(a), s); });
      return;
    }
  }
}

}  // namespace rpgen
