// The random programs' generator (jit_random_program_test.cpp): seeded
// programs of wok ops, each step recorded as C++ code (for reproducers), as
// a function rebuilding it, and as its reference value (random_program_reference.h).
// The op families' definitions are in random_program_gen_ops.h.
#pragma once

#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "random_program_ref_elementwise.h"
#include "random_program_ref_shaped.h"
#include "random_program_reference.h"
#include "wok/runtime/wrapping.h"

namespace rpgen {

using rp::B;
using rp::R;
using rp::U;
using rp::Val;
using wok::DType;
using wok::Shape;
using wok::Tensor;

enum class Flavour { kContinuous, kInteger, kMixed };

// The dtypes programs are drawn from: the Integer flavour's (bool and the
// integers), then the floats; the Continuous flavour takes the floats, the
// Mixed flavour all thirteen.
inline constexpr DType kProgramDTypes[] = {
    DType::kBool,  DType::kInt32,  DType::kInt64,  DType::kInt8,    DType::kUInt8,   DType::kInt16,  DType::kUInt16,
    DType::kUInt32, DType::kUInt64, DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
inline constexpr int kIntegerDTypes = 9, kAllDTypes = 13;

using StepFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Program {
  std::vector<std::string> code;  // one statement per value: "wok::Tensor t3 = ...;"
  std::vector<StepFn> steps;      // rebuild value k from the earlier ones
  std::vector<Val> refs;
  std::vector<Tensor> vals;  // recorded while generating (never evaluated)
  std::string error;         // the reference disagrees with wok about a shape or dtype
};

inline std::string T(int i) { return "t" + std::to_string(i); }
inline std::string ints_code(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "}";
}
inline std::string dtype_code(DType t) {
  switch (t) {
    case DType::kBool: return "wok::DType::kBool";
    case DType::kInt8: return "wok::DType::kInt8";
    case DType::kUInt8: return "wok::DType::kUInt8";
    case DType::kInt16: return "wok::DType::kInt16";
    case DType::kUInt16: return "wok::DType::kUInt16";
    case DType::kInt32: return "wok::DType::kInt32";
    case DType::kUInt32: return "wok::DType::kUInt32";
    case DType::kInt64: return "wok::DType::kInt64";
    case DType::kUInt64: return "wok::DType::kUInt64";
    case DType::kFloat16: return "wok::DType::kFloat16";
    case DType::kBFloat16: return "wok::DType::kBFloat16";
    case DType::kFloat32: return "wok::DType::kFloat32";
    case DType::kFloat64: break;
  }
  return "wok::DType::kFloat64";
}
// The C++ element type of from_vector for t.
inline const char* element_code(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt8: return "int8_t";
    case DType::kUInt8: return "uint8_t";
    case DType::kInt16: return "int16_t";
    case DType::kUInt16: return "uint16_t";
    case DType::kInt32: return "int32_t";
    case DType::kUInt32: return "uint32_t";
    case DType::kInt64: return "int64_t";
    case DType::kUInt64: return "uint64_t";
    case DType::kFloat16: return "wok::half";
    case DType::kBFloat16: return "wok::bfloat16";
    case DType::kFloat32: return "float";
    case DType::kFloat64: break;
  }
  return "double";
}
// A tensor of dtype t from exact values (floats already rounded to t, integers wrapped to it).
inline Tensor make_input(DType t, const std::vector<double>& fv, const std::vector<int64_t>& iv, const Shape& s) {
  auto from = [&](auto tag, const auto& values) {
    using E = decltype(tag);
    std::vector<E> v;
    v.reserve(values.size());
    for (auto x : values) v.push_back(static_cast<E>(x));
    return wok::from_vector(v, s);
  };
  switch (t) {
    case DType::kBool: return wok::from_vector(std::vector<bool>(iv.begin(), iv.end()), s);
    case DType::kInt8: return from(int8_t{}, iv);
    case DType::kUInt8: return from(uint8_t{}, iv);
    case DType::kInt16: return from(int16_t{}, iv);
    case DType::kUInt16: return from(uint16_t{}, iv);
    case DType::kInt32: return from(int32_t{}, iv);
    case DType::kUInt32: return from(uint32_t{}, iv);
    case DType::kInt64: return from(int64_t{}, iv);
    case DType::kUInt64: return from(uint64_t{}, iv);
    case DType::kFloat16: return from(wok::half{}, fv);
    case DType::kBFloat16: return from(wok::bfloat16{}, fv);
    case DType::kFloat32: return from(float{}, fv);
    case DType::kFloat64: break;
  }
  return wok::from_vector(fv, s);
}
inline std::string num_code(double v, bool f32) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f32 ? s + "f" : s;
}
inline std::string opt_code(std::optional<int64_t> v) { return v ? std::to_string(*v) : "std::nullopt"; }


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
  // float32 and float64, a half type one time in four.
  DType continuous_dtype() {
    if (chance(4)) return pick(0, 1) ? DType::kFloat16 : DType::kBFloat16;
    return pick(0, 1) ? DType::kFloat32 : DType::kFloat64;
  }
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
      case Flavour::kContinuous: return continuous_dtype();
      case Flavour::kInteger: return kProgramDTypes[pick(0, kIntegerDTypes - 1)];
      case Flavour::kMixed: break;
    }
    return kProgramDTypes[pick(0, kAllDTypes - 1)];
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
          int64_t big[] = {INT32_MAX, INT32_MIN, 1 << 20, -(1 << 24), INT64_MAX, INT64_MIN, INT8_MAX, INT16_MIN, UINT16_MAX};
          v = wok::wrap_add(big[pick(0, 8)], static_cast<int64_t>(pick(-2, 2)));  // near the limits: wraps
        }
        v = rp::wrap(t, v);  // the unsigned hold small negatives as large values
        iv[k] = v;
        r.i[k] = v;
      }
    }
    std::string lit;
    for (int64_t k = 0; k < count; ++k) {
      if (k) lit += ", ";
      if (rp::is_half(t)) lit += std::string(element_code(t)) + "(" + num_code(fv[k], true) + ")";
      else if (rp::is_f(t)) lit += num_code(fv[k], t == DType::kFloat32);
      else if (t == DType::kBool) lit += iv[k] ? "true" : "false";
      else if (t == DType::kUInt64) lit += std::to_string(static_cast<uint64_t>(iv[k])) + "ull";
      else if (iv[k] == INT64_MIN) lit += "INT64_MIN";
      else lit += std::to_string(iv[k]);
    }
    std::string expr = std::string("wok::from_vector(std::vector<") + element_code(t) + ">{" + lit + "}, wok::Shape" +
                       ints_code(s) + ")";
    StepFn fn = [t, s, fv, iv](const std::vector<Tensor>&) { return make_input(t, fv, iv, s); };
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


  // ---- op families (random_program_gen_ops.h) ----------------------------------------
  int unary(U op, int a);
  static Tensor apply_unary(U op, const Tensor& x);
  static Tensor apply_binary(B op, const Tensor& a, const Tensor& b);
  int binary(B op, int a, int b);
  int binary_scalar(B op, int a, double s);
  static Tensor apply_binary_scalar(B op, const Tensor& a, double s);
  void op_unary(int a);
  void op_binary(int a);
  void op_where(int a);
  void op_clamp(int a);
  void op_cast(int a);
  void op_reduce(int a);
  void op_norm(int a);
  void op_matmul(int a);
  Shape factor_shape(int64_t count);
  void op_movement(int a);
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

}  // namespace rpgen
