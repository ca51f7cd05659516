// Seeded random programs, each run under the JIT and the precompiled
// kernels and checked against a float64 reference with a first-order
// error bound (tests/random_program_util.h, Note [Reference values and
// bounds]).
//
// Programs mix every op family: elementwise unary and binary ops, casts,
// comparisons and where, clamp, reductions (sum mean max min prod argmax
// over random axes, with and without keepdims, negative axes), softmax,
// log_softmax, layer_norm, rms_norm, matmul (2-D, batched, 1-D operands,
// K = 0), and movement (reshape, permute, transpose, slice, concat,
// broadcast_to), on tensors of rank 0 to 4 with empty (0) and size-1 dims
// and every dtype. Three flavours choose inputs and ops:
//  - Continuous: finite float32 / float64 inputs, ops kept well conditioned;
//  - Integer: int32 / int64 / bool inputs, wrapping arithmetic;
//  - Mixed: every dtype, nan, inf and -0 inputs, every op unguarded.
// Every output is checked against the reference where its bound is known;
// JIT and precompiled must agree bitwise where docs/numerics.md promises it
// (no float sum, mean or product on the path) and within the bound
// otherwise. A failure prints a standalone C++ reproducer (a main() using
// <wok/wok.h> that rebuilds the inputs and the ops).
//
// Environment:
//   WOK_FUZZ_PROGRAMS=N  programs per flavour (default 700 + 650 + 650 = 2,000)
//   WOK_TEST_SEED=S      run only program S (the seed a failure names)
//   WOK_TEST_VERBOSE=1   print each seed before it runs (to find a crash) and
//                        the counts of checked elements
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "random_program_util.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/wrapping.h"

namespace {

using rp::B;
using rp::R;
using rp::U;
using rp::Val;
using wok::DType;
using wok::Shape;
using wok::Tensor;

enum class Flavour { kContinuous, kInteger, kMixed };

using StepFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Program {
  std::vector<std::string> code;  // one statement per value: "wok::Tensor t3 = ...;"
  std::vector<StepFn> steps;      // rebuild value k from the earlier ones
  std::vector<Val> refs;
  std::vector<Tensor> vals;  // recorded while generating (never evaluated)
  std::string error;         // the reference disagrees with wok about a shape or dtype
};

std::string T(int i) { return "t" + std::to_string(i); }
std::string ints_code(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "}";
}
std::string dtype_code(DType t) {
  switch (t) {
    case DType::kBool: return "wok::DType::kBool";
    case DType::kInt32: return "wok::DType::kInt32";
    case DType::kInt64: return "wok::DType::kInt64";
    case DType::kFloat32: return "wok::DType::kFloat32";
    case DType::kFloat64: break;
  }
  return "wok::DType::kFloat64";
}
std::string num_code(double v, bool f32) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f32 ? s + "f" : s;
}
std::string opt_code(std::optional<int64_t> v) { return v ? std::to_string(*v) : "std::nullopt"; }

class Generator {
 public:
  Generator(uint64_t seed, Flavour flavour, Program& p) : rng_(seed), flavour_(flavour), p_(p) {}

  void build() {
    big_ = pick(0, 9) == 0;
    base_ = random_shape();
    int n_inputs = pick(1, 3);
    for (int k = 0; k < n_inputs; ++k) fresh_input(base_);
    int n_ops = pick(1, 24);
    if (n() == 0) return;
    for (int k = 0; k < n_ops && p_.error.empty(); ++k) add_op();
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(int one_in) { return pick(1, one_in) == 1; }
  int64_t cap() const { return big_ ? 12000 : 600; }
  int n() const { return static_cast<int>(p_.vals.size()); }
  const Tensor& V(int i) const { return p_.vals[i]; }
  const Val& RV(int i) const { return p_.refs[i]; }

  Shape random_shape() {
    int rank = pick(1, 4);
    Shape s(rank);
    if (big_) {
      for (auto& d : s) d = 1;
      s[pick(0, rank - 1)] = pick(1, 2);
      s[pick(0, rank - 1)] = pick(1000, 5000);
      return s;
    }
    for (auto& d : s) {
      int k = pick(0, 19);
      d = k == 0 ? 0 : k < 6 ? 1 : pick(2, rank >= 3 ? 5 : 9);
    }
    while (wok::numel(s) > 300)
      for (auto& d : s) d = std::max<int64_t>(1, d / 2);
    return s;
  }

  DType input_dtype() {
    switch (flavour_) {
      case Flavour::kContinuous: return pick(0, 1) ? DType::kFloat32 : DType::kFloat64;
      case Flavour::kInteger: {
        DType ts[] = {DType::kInt32, DType::kInt64, DType::kBool};
        return ts[pick(0, 2)];
      }
      case Flavour::kMixed: break;
    }
    return wok::kAllDTypes[pick(0, 4)];
  }

  // Adds a step: `expr` is its C++ code, `fn` builds it, `ref` its reference
  // from wok's result (for its dtype). Returns its index, or -1 when wok
  // rejects the op (a dtype or shape rule) or the result is too large.
  int push(const std::string& expr, StepFn fn, const std::function<Val(const Tensor&)>& ref) {
    Tensor y;
    try {
      y = fn(p_.vals);
    } catch (const wok::Error&) {
      return -1;
    }
    if (y.numel() > cap()) return -1;
    Val v = ref(y);
    if (p_.error.empty() && (v.shape != y.shape() || v.dtype != y.dtype())) {
      p_.error = "the reference of %" + std::to_string(n()) + " is " + std::string(wok::dtype_name(v.dtype)) + wok::shape_str(v.shape) +
                 ", wok's " + std::string(wok::dtype_name(y.dtype())) + wok::shape_str(y.shape());
    }
    p_.code.push_back("wok::Tensor " + T(n()) + " = " + expr + ";");
    p_.steps.push_back(std::move(fn));
    p_.vals.push_back(y);
    p_.refs.push_back(std::move(v));
    return n() - 1;
  }

  int fresh_input(const Shape& s, DType t) {
    const int64_t count = wok::numel(s);
    Val r = rp::make_val(t, s);
    std::vector<double> fv(count);
    std::vector<int64_t> iv(count);
    const bool ties = chance(5);  // few distinct values: ties for max / argmax, exact comparisons
    const bool large = flavour_ != Flavour::kContinuous && chance(6);
    for (int64_t k = 0; k < count; ++k) {
      if (rp::is_f(t)) {
        double v = ties ? pick(-4, 4) * 0.5 : uniform(-3, 3);
        if (flavour_ == Flavour::kMixed && chance(30)) {
          double special[] = {INFINITY, -INFINITY, NAN, -0.0, 1e30, -1e-30};
          v = special[pick(0, 5)];
        }
        fv[k] = rp::rnd(t, v);
        r.f[k] = fv[k];
      } else {
        int64_t v = t == DType::kBool ? pick(0, 1) : ties ? pick(-2, 2) : pick(-50, 50);
        if (large && t != DType::kBool) {
          int64_t big[] = {INT32_MAX, INT32_MIN, 1 << 20, -(1 << 24), INT64_MAX, INT64_MIN};
          v = rp::wrap(t, wok::wrap_add(big[pick(0, 5)], static_cast<int64_t>(pick(-2, 2))));  // near the limits: wraps
        }
        iv[k] = v;
        r.i[k] = v;
      }
    }
    std::string lit;
    for (int64_t k = 0; k < count; ++k) {
      if (k) lit += ", ";
      if (rp::is_f(t)) lit += num_code(fv[k], t == DType::kFloat32);
      else if (t == DType::kBool) lit += iv[k] ? "true" : "false";
      else if (iv[k] == INT64_MIN) lit += "INT64_MIN";
      else lit += std::to_string(iv[k]);
    }
    const char* ctype[] = {"bool", "int32_t", "int64_t", "float", "double"};
    std::string expr = std::string("wok::from_vector(std::vector<") + ctype[static_cast<int>(t)] + ">{" + lit +
                       "}, wok::Shape" + ints_code(s) + ")";
    StepFn fn = [t, s, fv, iv](const std::vector<Tensor>&) {
      switch (t) {
        case DType::kFloat32: return wok::from_vector(std::vector<float>(fv.begin(), fv.end()), s);
        case DType::kFloat64: return wok::from_vector(fv, s);
        case DType::kInt32: return wok::from_vector(std::vector<int32_t>(iv.begin(), iv.end()), s);
        case DType::kInt64: return wok::from_vector(iv, s);
        case DType::kBool: break;
      }
      return wok::from_vector(std::vector<bool>(iv.begin(), iv.end()), s);
    };
    return push(expr, fn, [&](const Tensor&) { return r; });
  }
  int fresh_input(const Shape& s) { return fresh_input(s, input_dtype()); }

  // An operand that broadcasts with `a`: a recent value whose shape does,
  // or a new input of a's shape with some dims 1 and leading dims dropped.
  int partner(int a) {
    const Shape& sa = V(a).shape();
    if (!chance(3)) {
      for (int tries = 0; tries < 6; ++tries) {
        int b = operand();
        auto s = wok::broadcast_shapes(sa, V(b).shape());
        if (s && wok::numel(*s) <= cap()) return b;
      }
    }
    Shape s = sa;
    for (auto& d : s)
      if (chance(3)) d = 1;
    if (!s.empty() && chance(4)) s.erase(s.begin(), s.begin() + pick(1, static_cast<int>(s.size())));
    return fresh_input(s);
  }

  int operand() {
    // Favour recent values, so programs form chains rather than fans.
    int back = std::min(n() - 1, std::abs(static_cast<int>(std::normal_distribution<double>(0, 3)(rng_))));
    return n() - 1 - back;
  }

  // ---- op families ---------------------------------------------------------------
  int unary(U op, int a) {
    std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ")";
    return push(expr, [op, a](const std::vector<Tensor>& v) { return apply_unary(op, v[a]); },
                [&](const Tensor& y) { return rp::ref_unary(op, RV(a), y.dtype()); });
  }
  static Tensor apply_unary(U op, const Tensor& x) {
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
  static Tensor apply_binary(B op, const Tensor& a, const Tensor& b) {
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
  int binary(B op, int a, int b) {
    std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ", " + T(b) + ")";
    return push(expr, [op, a, b](const std::vector<Tensor>& v) { return apply_binary(op, v[a], v[b]); },
                [&](const Tensor& y) { return rp::ref_binary(op, RV(a), RV(b), y.dtype()); });
  }
  // a op (a plain number, weakly typed: it takes a's dtype when a is a float).
  int binary_scalar(B op, int a, double s) {
    if (!V(a).defined() || !rp::is_f(V(a).dtype())) return -1;
    std::string expr = std::string("wok::") + rp::name(op) + "(" + T(a) + ", " + num_code(s, false) + ")";
    return push(expr, [op, a, s](const std::vector<Tensor>& v) { return apply_binary_scalar(op, v[a], s); },
                [&](const Tensor& y) { return rp::ref_binary(op, RV(a), rp::ref_scalar(y.dtype(), s), y.dtype()); });
  }
  static Tensor apply_binary_scalar(B op, const Tensor& a, double s) {
    switch (op) {
      case B::kAdd: return wok::add(a, s);
      case B::kMul: return wok::mul(a, s);
      default: break;
    }
    return wok::sub(a, s);
  }

  void op_unary(int a) {
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

  void op_binary(int a) {
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

  void op_where(int a) {
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

  void op_clamp(int a) {
    const bool f = rp::is_f(V(a).dtype());
    double lo = f ? pick(-6, 2) * 0.25 : pick(-30, 5), hi = f ? lo + pick(0, 8) * 0.25 : lo + pick(0, 40);
    push("wok::clamp(" + T(a) + ", " + num_code(lo, false) + ", " + num_code(hi, false) + ")",
         [a, lo, hi](const std::vector<Tensor>& v) { return wok::clamp(v[a], lo, hi); },
         [&](const Tensor&) { return rp::ref_clamp(RV(a), lo, hi); });
  }

  void op_cast(int a) {
    DType t;
    if (flavour_ == Flavour::kContinuous) t = pick(0, 1) ? DType::kFloat32 : DType::kFloat64;
    else if (flavour_ == Flavour::kInteger) t = wok::kAllDTypes[pick(0, 2)];
    else t = wok::kAllDTypes[pick(0, 4)];
    push("wok::cast(" + T(a) + ", " + dtype_code(t) + ")", [a, t](const std::vector<Tensor>& v) { return wok::cast(v[a], t); },
         [&](const Tensor&) { return rp::ref_cast(RV(a), t); });
  }

  void op_reduce(int a) {
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

  void op_norm(int a) {
    const int rank = V(a).ndim();
    if (rank == 0) return;
    const int64_t last = V(a).shape().back();
    DType wt = flavour_ == Flavour::kMixed ? wok::kAllDTypes[pick(0, 4)] : pick(0, 1) ? DType::kFloat32 : DType::kFloat64;
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

  void op_matmul(int a) {
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

  Shape factor_shape(int64_t count) {
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

  void op_movement(int a) {
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

  void add_op() {
    const int a = operand();
    const int k = pick(0, 99);
    if (k < 18) op_unary(a);
    else if (k < 38) op_binary(a);
    else if (k < 45) op_where(a);
    else if (k < 48) op_clamp(a);
    else if (k < 52) op_cast(a);
    else if (k < 68) op_reduce(a);
    else if (k < 76) op_norm(a);
    else if (k < 82) op_matmul(a);
    else if (k < 97) op_movement(a);
    else fresh_input(random_shape());
  }

  std::mt19937_64 rng_;
  Flavour flavour_;
  Program& p_;
  bool big_ = false;
  Shape base_;
};

struct Result {
  std::vector<double> f;
  std::vector<int64_t> i;
};

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

struct Counts {
  int64_t elements = 0, checked = 0, exact = 0;
};

std::string reproducer(const Program& p, const std::vector<int>& outs, int out, int64_t k, const std::string& what) {
  std::ostringstream s;
  s << "// " << what << "\n#include <wok/wok.h>\n\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <optional>\n#include <vector>\n\n"
    << "int main() {\n  for (wok::Backend backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {\n"
    << "    wok::set_backend(backend);\n";
  for (const std::string& line : p.code) s << "    " << line << "\n";
  s << "    wok::eval({";
  for (size_t j = 0; j < outs.size(); ++j) s << (j ? ", " : "") << T(outs[j]);
  s << "});\n    std::printf(\"%s: " << T(out) << "[" << k << "] = %.17g\\n\", backend == wok::Backend::kJit ? \"jit\" : \"precompiled\", "
    << T(out) << ".to_vector<double>()[" << k << "]);\n";
  s << "    std::printf(\"%s\\n\", " << T(out) << ".str().c_str());\n  }\n}\n";
  return s.str();
}

// Runs one random program; returns "" or a description of the mismatch.
std::string check_program(uint64_t seed, Flavour flavour, Counts& counts) {
  Program p;
  Generator(seed, flavour, p).build();
  if (p.vals.empty()) return "";
  if (!p.error.empty()) return "seed " + std::to_string(seed) + ": " + p.error;
  // Outputs: the last value and a few random others.
  std::vector<int> outs = {static_cast<int>(p.vals.size()) - 1};
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int k = 0; k < 2; ++k) outs.push_back(static_cast<int>(rng() % p.vals.size()));
  p.vals.clear();

  auto run = [&](wok::Backend backend) {
    wok::set_backend(backend);
    std::vector<Tensor> ts;
    for (const StepFn& f : p.steps) ts.push_back(f(ts));
    std::vector<Tensor> os;
    for (int o : outs) os.push_back(ts[o]);
    wok::eval(os);
    std::vector<Result> res;
    for (Tensor& t : os) {
      Result r;
      if (rp::is_f(t.dtype())) r.f = t.to_vector<double>();
      else r.i = t.to_vector<int64_t>();
      res.push_back(std::move(r));
    }
    return res;
  };
  const auto jit = run(wok::Backend::kJit);
  const auto pre = run(wok::Backend::kPrecompiled);
  wok::set_backend(wok::Backend::kJit);

  for (size_t j = 0; j < outs.size(); ++j) {
    const Val& ref = p.refs[outs[j]];
    const bool fl = ref.floating();
    // Safety factor 2 on the first-order bound (second-order terms, and the
    // bounds evaluated at the reference's values rather than wok's); the
    // absolute term covers subnormal results only.
    const double tiny = ref.dtype == DType::kFloat32 ? 1e-37 : 1e-300;
    for (int64_t k = 0; k < ref.size(); ++k) {
      const double r = ref.r[k];
      const double jv = fl ? jit[j].f[k] : static_cast<double>(jit[j].i[k]);
      const double pv = fl ? pre[j].f[k] : static_cast<double>(pre[j].i[k]);
      auto fail = [&](const std::string& what) {
        std::ostringstream m;
        m.precision(17);
        m << "seed " << seed << ": " << what << " at " << T(outs[j]) << "[" << k << "] (" << wok::dtype_name(ref.dtype)
          << wok::shape_str(ref.shape) << "): jit " << jv << ", precompiled " << pv << ", reference "
          << (fl ? ref.f[k] : static_cast<double>(ref.i[k])) << " (bound " << r << (r > 0 && r < 1e-300 ? " (sign of zero)" : "") << ", "
          << (ref.bitwise ? "bitwise" : "reassociated") << ")\n";
        const std::string head = m.str();
        m << "reproducer:\n" << reproducer(p, outs, outs[j], k, head.substr(0, head.size() - 1));
        return m.str();
      };
      ++counts.elements;
      // JIT vs precompiled.
      if (ref.bitwise || r == 0) {
        // The sign of a zero counts (a later division sees it), a nan's sign bit does not.
        bool same = fl ? same_value(jv, pv) && (std::isnan(jv) || std::signbit(jv) == std::signbit(pv))
                       : jit[j].i[k] == pre[j].i[k];
        if (!same && (ref.bitwise || r == 0)) return fail("JIT and precompiled differ");
      } else if (r < rp::kInf) {
        if (!same_value(jv, pv) && !(std::abs(jv - pv) <= 2 * (2 * r) + tiny))
          return fail("JIT and precompiled differ by more than the bound");
      }
      // Reference.
      if (!(r < rp::kInf)) continue;
      ++counts.checked;
      if (r == 0) ++counts.exact;
      for (int side = 0; side < 2; ++side) {
        const double got = side == 0 ? jv : pv;
        const double want = fl ? ref.f[k] : static_cast<double>(ref.i[k]);
        bool ok;
        if (!fl) ok = (side == 0 ? jit[j].i[k] : pre[j].i[k]) == ref.i[k];
        else if (r == 0) ok = same_value(got, want);
        else ok = std::isfinite(want) ? std::abs(got - want) <= 2 * r + tiny : same_value(got, want);
        if (!ok) return fail("result differs from the reference");
      }
    }
  }
  return "";
}

class RandomPrograms : public ::testing::TestWithParam<Flavour> {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  }
};

TEST_P(RandomPrograms, JitMatchesPrecompiledAndReference) {
  // 2,000 programs across the three flavours (700 + 650 + 650) by default.
  int count = GetParam() == Flavour::kContinuous ? 700 : 650;
  if (const char* n = std::getenv("WOK_FUZZ_PROGRAMS")) count = std::atoi(n);
  const uint64_t base = 1000003ull * (static_cast<uint64_t>(GetParam()) + 1);
  const char* only = std::getenv("WOK_TEST_SEED");
  const bool verbose = std::getenv("WOK_TEST_VERBOSE") != nullptr;
  int failures = 0;
  Counts counts;
  for (int i = 0; i < count && failures < 3; ++i) {
    const uint64_t seed = base + static_cast<uint64_t>(i);
    if (only && std::strtoull(only, nullptr, 10) != seed) continue;
    if (verbose) std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(seed));
    std::string msg = check_program(seed, GetParam(), counts);
    if (!msg.empty()) {
      ADD_FAILURE() << msg;
      ++failures;
    }
  }
  if (verbose || only)
    std::fprintf(stderr, "%lld output elements, %lld checked against the reference (%lld exactly)\n",
                 static_cast<long long>(counts.elements), static_cast<long long>(counts.checked),
                 static_cast<long long>(counts.exact));
  // A bound that is unknown everywhere would check nothing: most elements must be checked.
  if (!only && count >= 100) {
    const double min_fraction = GetParam() == Flavour::kMixed ? 0.5 : 0.9;
    EXPECT_GE(static_cast<double>(counts.checked), min_fraction * static_cast<double>(counts.elements));
  }
}

INSTANTIATE_TEST_SUITE_P(Flavours, RandomPrograms,
                         ::testing::Values(Flavour::kContinuous, Flavour::kInteger, Flavour::kMixed),
                         [](const auto& info) {
                           switch (info.param) {
                             case Flavour::kContinuous: return std::string("Continuous");
                             case Flavour::kInteger: return std::string("Integer");
                             case Flavour::kMixed: break;
                           }
                           return std::string("Mixed");
                         });

}  // namespace
