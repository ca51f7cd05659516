#include "wok/jit/x86/math_emitter.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "wok/runtime/vec_math_coeffs.h"

namespace wok::jit::x86 {

namespace {

using DT = DType;
constexpr DT F32 = DType::kFloat32;
constexpr DT F64 = DType::kFloat64;

bool f32(DT t) { return t == F32; }

// The integer dtype whose lanes match float dtype t.
DT int_of(DT t) { return f32(t) ? DType::kInt32 : DType::kInt64; }

// Bits of the float constant v as dtype t holds it.
uint64_t bits_of(DT t, double v) {
  uint64_t b = 0;
  if (f32(t)) {
    float f = static_cast<float>(v);
    std::memcpy(&b, &f, 4);
  } else {
    std::memcpy(&b, &v, 8);
  }
  return b;
}

asmjit::Operand C(VecEmitter& e, DT t, double v) { return e.const_operand(t, v); }

// c[0] x^(N-1) + ... + c[N-1], the order vm::horner rounds in. A power of
// two `scale` multiplies every coefficient, so every step's value (Note
// [One-factor exp scaling]).
template <size_t N, typename T>
ax::Vec horner(VecEmitter& e, DT t, const ax::Vec& x, const T (&c)[N], double scale = 1.0) {
  auto value = [&](size_t i) { return static_cast<double>(c[i]) * scale; };
  auto coef = [&](size_t i) { return C(e, t, value(i)); };
  ax::Vec acc = e.fma(t, x, coef(0), e.const_addend(t, value(1)));  // c0*x + c1 (the product is exact either way)
  for (size_t i = 2; i < N; ++i) e.fma_acc(t, acc, x, coef(i));
  return acc;
}

struct ExpK {
  double log2e, ln2hi, ln2lo, min, max, magic;
  int mantissa, bias;
};
ExpK exp_k(DT t) {
  if (f32(t)) return {vmc::kLog2eF, vmc::kLn2HiF, vmc::kLn2LoF, vmc::kExpMinF, vmc::kExpMaxF, vmc::kRoundMagicF, 23, 127};
  return {vmc::kLog2eD, vmc::kLn2HiD, vmc::kLn2LoD, vmc::kExpMinD, vmc::kExpMaxD, vmc::kRoundMagicD, 52, 1023};
}

// vm::exp_reduce: returns r, sets n (integer lanes) and nf (n as a float),
// each when asked for (asmjit keeps an unused instruction). n_offset is
// added to the integer n at no cost (folded into the magic number's bits);
// ln2_one_part subtracts n ln2 with ln2 rounded to float32 once (Note
// [Half-grade exp] in instr_emitter.cpp), not in two parts. x_scratch is
// the argument in a register the caller owns and reads no more: r is
// computed in it, with no copy of x (Note [Loop constants on AVX2] in
// vec_emitter.cpp counts what a copy costs).
ax::Vec exp_reduce(VecEmitter& e, DT t, const ax::Vec& x_scratch, ax::Vec* n_out, ax::Vec* nf_out, int n_offset = 0,
                   bool ln2_one_part = false) {
  ExpK k = exp_k(t);
  const ax::Vec& r = x_scratch;
  ax::Vec tt = e.fma(t, r, C(e, t, k.log2e), e.const_addend(t, k.magic));
  ax::Vec nf = e.sub(t, tt, C(e, t, k.magic));
  if (nf_out) *nf_out = nf;
  if (n_out) *n_out = e.int_sub(t, tt, e.const_bits_operand(t, bits_of(t, k.magic) - static_cast<uint64_t>(n_offset)));
  if (ln2_one_part) {
    e.fnma_acc(t, r, nf, C(e, t, vmc::kLn2F));
  } else {
    e.fnma_acc(t, r, nf, C(e, t, k.ln2hi));
    e.fnma_acc(t, r, nf, C(e, t, k.ln2lo));
  }
  return r;
}

// vm::expm1_reduced: returns expm1(r), sets n and nf as exp_reduce does,
// whose x_scratch this is.
ax::Vec expm1_reduced(VecEmitter& e, DT t, const ax::Vec& x_scratch, ax::Vec* n_out, ax::Vec* nf_out = nullptr) {
  ax::Vec r = exp_reduce(e, t, x_scratch, n_out, nf_out);
  ax::Vec p = f32(t) ? horner(e, t, r, vmc::kExpPolyF) : horner(e, t, r, vmc::kExpPolyD);
  ax::Vec rr = e.mul(t, r, r);
  return e.fma(t, rr, p, r);
}

// vm::pow2i: (n + bias) << mantissa.
ax::Vec pow2i(VecEmitter& e, DT t, const ax::Vec& n) {
  ExpK k = exp_k(t);
  ax::Vec biased = e.int_add(t, n, e.const_bits_operand(t, static_cast<uint64_t>(k.bias)));
  return e.shl(t, biased, k.mantissa);
}

ax::Vec copysign(VecEmitter& e, DT t, const ax::Vec& mag, const ax::Vec& sign) {
  uint64_t s = f32(t) ? 0x80000000u : 0x8000000000000000ull;
  ax::Vec m = e.bit_and(t, mag, e.const_bits_operand(t, ~s & (f32(t) ? 0xffffffffu : ~uint64_t{0})));
  ax::Vec sg = e.bit_and(t, sign, e.const_bits_operand(t, s));
  return e.bit_or(t, m, sg);
}

ax::Vec keep_nan(VecEmitter& e, DT t, const ax::Vec& x, const ax::Vec& res) {
  return e.blend(t, e.is_nan(t, x), x, res);
}

// x_scratch: as exp_reduce's.
ax::Vec expm1_small(VecEmitter& e, DT t, const ax::Vec& x_scratch) {
  ax::Vec n;
  ax::Vec p = expm1_reduced(e, t, x_scratch, &n);
  ax::Vec s = pow2i(e, t, n);
  ax::Vec sm1 = e.sub(t, s, C(e, t, 1.0));
  return e.fma(t, s, p, sm1);
}

ax::Vec sincos_d(VecEmitter& e, const ax::Vec& x, int quadrant_shift) {
  ax::Vec tt = e.fma(F64, x, C(e, F64, vmc::kTwoOverPi), C(e, F64, vmc::kRoundMagicD));
  ax::Vec n = e.sub(F64, tt, C(e, F64, vmc::kRoundMagicD));
  ax::Vec q = quadrant_shift ? e.int_add(F64, tt, e.const_bits_operand(F64, static_cast<uint64_t>(quadrant_shift))) : tt;
  ax::Vec negn = e.neg(F64, n);
  ax::Vec r = e.fma(F64, negn, C(e, F64, vmc::kPio2Part1), x);
  r = e.fma(F64, negn, C(e, F64, vmc::kPio2Part2), r);
  r = e.fma(F64, negn, C(e, F64, vmc::kPio2Part3), r);
  r = e.fma(F64, negn, C(e, F64, vmc::kPio2Part4), r);
  ax::Vec z = e.mul(F64, r, r);
  ax::Vec rz = e.mul(F64, r, z);
  ax::Vec s = e.fma(F64, rz, horner(e, F64, z, vmc::kSinPoly), r);
  ax::Vec zz = e.mul(F64, z, z);
  ax::Vec c0 = e.fma(F64, z, C(e, F64, -0.5), C(e, F64, 1.0));
  ax::Vec c = e.fma(F64, zz, horner(e, F64, z, vmc::kCosPoly), c0);
  ax::Vec zero = e.zero(DType::kInt64);
  Mask odd = e.cmp(DType::kInt64, Cmp::kNe, e.bit_and(DType::kInt64, q, e.const_bits_operand(DType::kInt64, 1)), zero);
  ax::Vec v = e.blend(F64, odd, c, s);
  Mask flip = e.cmp(DType::kInt64, Cmp::kNe, e.bit_and(DType::kInt64, q, e.const_bits_operand(DType::kInt64, 2)), zero);
  v = e.blend(F64, flip, e.neg(F64, v), v);
  Mask too_big = e.cmp(F64, Cmp::kGt, e.abs(F64, x), C(e, F64, vmc::kSinCosMax));
  v = e.blend(F64, too_big, e.const_vec(F64, std::numeric_limits<double>::quiet_NaN()), v);
  if (quadrant_shift == 0) v = e.blend(F64, e.cmp(F64, Cmp::kEq, x, C(e, F64, 0.0)), x, v);
  return v;
}

ax::Vec sin_or_cos(VecEmitter& e, DT t, const ax::Vec& x, int shift) {
  if (!f32(t)) return sincos_d(e, x, shift);
  return e.cast(F64, F32, sincos_d(e, e.cast(F32, F64, x), shift));
}

ax::Vec pow_special_cases(VecEmitter& e, DT t, const ax::Vec& a, const ax::Vec& b, ax::Vec r) {
  ax::Vec fb = e.round(t, b, 0x09);
  Mask b_int = e.cmp(t, Cmp::kEq, fb, b);
  ax::Vec half = e.mul(t, b, C(e, t, 0.5));
  Mask b_odd = e.mask_and(t, b_int, e.cmp(t, Cmp::kNe, e.round(t, half, 0x09), half));
  Mask neg = e.cmp(int_of(t), Cmp::kLt, a, e.zero(int_of(t)));  // sign bit set
  r = e.blend(t, e.mask_and(t, neg, b_odd), e.neg(t, r), r);
  Mask a_neg = e.cmp(t, Cmp::kLt, a, C(e, t, 0.0));
  Mask a_not_minf = e.cmp(t, Cmp::kNe, a, C(e, t, -std::numeric_limits<double>::infinity()));
  Mask nan_case = e.mask_and(t, e.mask_and(t, a_neg, e.mask_not(t, b_int)), a_not_minf);
  r = e.blend(t, nan_case, e.const_vec(t, std::numeric_limits<double>::quiet_NaN()), r);
  ax::Vec one = e.const_vec(t, 1.0);
  Mask unit = e.mask_and(t, e.cmp(t, Cmp::kEq, e.abs(t, a), one),
                         e.cmp(t, Cmp::kEq, e.abs(t, b), C(e, t, std::numeric_limits<double>::infinity())));
  r = e.blend(t, unit, one, r);
  r = e.blend(t, e.cmp(t, Cmp::kEq, b, C(e, t, 1.0)), a, r);
  r = e.blend(t, e.cmp(t, Cmp::kEq, b, C(e, t, 2.0)), e.mul(t, a, a), r);
  r = e.blend(t, e.cmp(t, Cmp::kEq, b, C(e, t, -1.0)), e.div(t, one, a), r);
  Mask root = e.mask_and(t, e.cmp(t, Cmp::kEq, b, C(e, t, 0.5)), e.cmp(t, Cmp::kGe, a, C(e, t, 0.0)));
  r = e.blend(t, root, e.add(t, e.sqrt(t, a), C(e, t, 0.0)), r);
  Mask trivial = e.mask_or(t, e.cmp(t, Cmp::kEq, a, one), e.cmp(t, Cmp::kEq, b, C(e, t, 0.0)));
  return e.blend(t, trivial, one, r);
}

}  // namespace

// Note [One-factor exp scaling]
// Without AVX-512's vscalef, exp's last step multiplies q (e^r, in
// [0.7, 1.42]) by 2^n as integer-built powers of two; n spans about 280
// binades in float32 (the clamps' [-150, 128]), more than a normal float
// holds, so vm::exp takes two factors, 2^(n/2) and 2^(n - n/2): eight
// instructions (halve, two biases and shifts, a subtract, two multiplies).
// When the argument cannot be positive (Note [Nonpositive exp arguments]
// in instr_emitter.cpp) n is in [-150, 0] ([-1076, 0] in float64), and
// 2^(n + 64) is a normal number for every such n, and q 2^-64 * 2^(n + 64)
// rounds the exact q 2^n once, as q * s1 * s2 does, so the bits are the
// same. The 2^-64 is not a multiply of its own: it is in the polynomial's
// coefficients, which makes every Horner step's value exactly 2^-64 times
// the unscaled one (each fused multiply-add rounds its exact result once,
// and every value stays far above the subnormal range: each step's value
// is near its coefficient, the smallest of which is about 2^-10 in float32,
// and 2^-74 is a normal float32). The 64 and the exponent bias fold into
// the magic number that extracts n, leaving a shift and one multiply: six
// instructions fewer per vector than vm::exp's scaling. On the Zen 3 EPYC
// (AVX2) the multiply by 2^-64 that the coefficients took over was 0.6-0.9
// of the 8.8 cycles a vector took in a standalone loop of the half-grade
// exp pass (best of 40 rounds, two runs). A nan argument stays nan: q is
// nan and the multiply keeps it, whatever its n.
constexpr int kOneFactorScale = 64;

ax::Vec emit_exp(VecEmitter& e, DT t, const ax::Vec& x, ExpUse use) {
  ExpK k = exp_k(t);
  ax::Vec xc = e.max_raw(t, e.const_vec(t, k.min), x);                 // x < min ? min : x
  if (!use.nonpositive) xc = e.min_raw(t, e.const_vec(t, k.max), xc);  // xc > max ? max : xc
  ax::Vec n, nf;
  // AVX-512 scales by the float n (vscalef), AVX2 by integer powers of two.
  // Note [Direct exp polynomial] in runtime/kernels/cpu/vec_math.h.
  const bool one_factor = use.nonpositive && !e.avx512();
  const int n_offset = one_factor ? kOneFactorScale + k.bias : 0;
  // Note [Half-grade exp] in instr_emitter.cpp: ln2 in one part, degree 5.
  const bool half_grade = use.half_grade && f32(t);
  ax::Vec r = exp_reduce(e, t, xc, e.avx512() ? nullptr : &n, &nf, n_offset, half_grade);  // xc: a clamp's own
  const double q_scale = one_factor ? std::ldexp(1.0, -kOneFactorScale) : 1.0;  // Note [One-factor exp scaling]
  ax::Vec q = half_grade ? horner(e, t, r, vmc::kExpHalfPolyF, q_scale)
              : f32(t)   ? horner(e, t, r, vmc::kExpDirectPolyF, q_scale)
                         : horner(e, t, r, vmc::kExpDirectPolyD, q_scale);
  ax::Vec v;
  if (e.avx512()) {
    // vscalef(q, n) rounds exactly like q * s1 * s2 below: the first
    // product is a power-of-two scaling, exact in the normal range.
    v = e.scale2(t, q, nf);
  } else if (one_factor) {
    // Note [One-factor exp scaling]: n holds n + 64 + bias, q is q 2^-64.
    ax::Vec s = e.shl(t, n, k.mantissa);  // 2^(n + 64)
    v = e.mul(t, q, s);
  } else {
    ax::Vec h = e.shr_arith(int_of(t), n, 1);
    ax::Vec s1 = pow2i(e, t, h);
    ax::Vec s2 = pow2i(e, t, e.int_sub(t, n, h));
    v = e.mul(t, e.mul(t, q, s1), s2);
  }
  // A nan stays nan through the clamps (max_raw and min_raw return their
  // second operand when unordered) and the arithmetic, as in vm::exp.
  return v;
}

// vm::tanh; Note [Cheap transcendentals] in runtime/kernels/cpu/vec_math.h.
ax::Vec emit_tanh(VecEmitter& e, DT t, const ax::Vec& x) {
  double twice = f32(t) ? static_cast<double>(2.0f * vmc::kTanhOneF) : 2.0 * vmc::kTanhOneD;
  ax::Vec a = e.abs(t, x);
  ax::Vec y = e.add(t, a, a);  // 2|x| exactly, on the adders rather than the multipliers
  y = e.min_raw(t, e.const_vec(t, twice), y);  // y > twice ? twice : y (nan stays y)
  ax::Vec em = expm1_small(e, t, y);  // y: the clamp's own
  ax::Vec res = e.div(t, em, e.add(t, em, C(e, t, 2.0)));
  uint64_t sign = f32(t) ? 0x80000000u : 0x8000000000000000ull;
  return e.bit_or(t, res, e.bit_and(t, x, e.const_bits_operand(t, sign)));
}

ax::Vec emit_log(VecEmitter& e, DT t, const ax::Vec& x) {
  ExpK k = exp_k(t);
  double min_normal = f32(t) ? static_cast<double>(std::numeric_limits<float>::min()) : std::numeric_limits<double>::min();
  double scale = f32(t) ? 8388608.0 : 4503599627370496.0;
  uint64_t mant_mask = (uint64_t{1} << k.mantissa) - 1;
  uint64_t one_bits = static_cast<uint64_t>(k.bias) << k.mantissa;

  Mask sub = e.cmp(t, Cmp::kLt, x, C(e, t, min_normal));
  ax::Vec xs = e.blend(t, sub, e.mul(t, x, C(e, t, scale)), x);
  ax::Vec ex = e.int_sub(t, e.shr_logical(t, xs, k.mantissa), e.const_bits_operand(t, static_cast<uint64_t>(k.bias)));
  ax::Vec m = e.bit_or(t, e.bit_and(t, xs, e.const_bits_operand(t, mant_mask)), e.const_bits_operand(t, one_bits));
  Mask big = e.cmp(t, Cmp::kGt, m, C(e, t, vmc::kSqrt2));
  m = e.blend(t, big, e.mul(t, m, C(e, t, 0.5)), m);
  ex = e.blend(t, big, e.int_add(t, ex, e.const_bits_operand(t, 1)), ex);
  ex = e.blend(t, sub, e.int_sub(t, ex, e.const_bits_operand(t, static_cast<uint64_t>(k.mantissa))), ex);
  ax::Vec f = e.sub(t, m, C(e, t, 1.0));
  ax::Vec s = e.div(t, f, e.add(t, f, C(e, t, 2.0)));
  ax::Vec z = e.mul(t, s, s);
  ax::Vec r = e.mul(t, z, f32(t) ? horner(e, t, z, vmc::kLogPolyF) : horner(e, t, z, vmc::kLogPolyD));
  ax::Vec hf = e.mul(t, e.mul(t, f, C(e, t, 0.5)), f);
  ax::Vec inner = e.sub(t, hf, e.mul(t, s, e.add(t, hf, r)));
  ax::Vec l1p = e.sub(t, f, inner);
  // Small integer exponent to float: exact either way; the magic-number
  // route avoids AVX2's missing int64 -> double conversion.
  ax::Vec ef;
  if (f32(t)) {
    ef = e.cast(DType::kInt32, F32, ex);
  } else {
    ax::Vec biased = e.int_add(t, ex, e.const_bits_operand(t, bits_of(t, vmc::kRoundMagicD)));
    ef = e.sub(t, biased, C(e, t, vmc::kRoundMagicD));
  }
  ax::Vec res = e.fma(t, ef, C(e, t, k.ln2hi), e.fma(t, ef, C(e, t, k.ln2lo), l1p));
  double inf = std::numeric_limits<double>::infinity();
  res = e.blend(t, e.cmp(t, Cmp::kEq, x, C(e, t, inf)), x, res);
  res = e.blend(t, e.cmp(t, Cmp::kEq, x, C(e, t, 0.0)), e.const_vec(t, -inf), res);
  res = e.blend(t, e.cmp(t, Cmp::kLt, x, C(e, t, 0.0)), e.const_vec(t, std::numeric_limits<double>::quiet_NaN()), res);
  return keep_nan(e, t, x, res);
}

ax::Vec emit_sin(VecEmitter& e, DT t, const ax::Vec& x) { return sin_or_cos(e, t, x, 0); }
ax::Vec emit_cos(VecEmitter& e, DT t, const ax::Vec& x) { return sin_or_cos(e, t, x, 1); }

ax::Vec emit_erf(VecEmitter& e, DT t, const ax::Vec& x) {
  bool single = f32(t);
  double one_cut = single ? static_cast<double>(vmc::kErfOneF) : vmc::kErfOneD;
  double mid = single ? static_cast<double>(vmc::kErfcMidF) : vmc::kErfcMidD;
  double scale = single ? static_cast<double>(vmc::kErfcScaleF) : vmc::kErfcScaleD;
  ax::Vec a = e.abs(t, x);
  ax::Vec small = e.mul(t, x, single ? horner(e, t, e.mul(t, x, x), vmc::kErfTaylorF)
                                     : horner(e, t, e.mul(t, x, x), vmc::kErfTaylorD));
  ax::Vec one = e.const_vec(t, 1.0);
  ax::Vec ac = e.min_raw(t, e.const_vec(t, one_cut), a);  // a > cut ? cut : a
  ax::Vec u = e.mul(t, e.sub(t, e.div(t, one, e.add(t, ac, one)), C(e, t, mid)), C(e, t, scale));
  ax::Vec g = single ? horner(e, t, u, vmc::kErfcPolyF) : horner(e, t, u, vmc::kErfcPolyD);
  ax::Vec ex = emit_exp(e, t, e.neg(t, e.mul(t, ac, ac)), {.nonpositive = true});  // -(ac ac) <= 0
  ax::Vec large = e.sub(t, one, e.mul(t, ex, g));
  large = e.blend(t, e.cmp(t, Cmp::kGe, a, C(e, t, one_cut)), one, large);
  ax::Vec res = e.blend(t, e.cmp(t, Cmp::kLt, a, C(e, t, vmc::kErfSmall)), small, copysign(e, t, large, x));
  return keep_nan(e, t, x, res);
}

namespace {
// vm::log_dd: log(x) as hi + lo.
void log_dd(VecEmitter& e, const ax::Vec& x, ax::Vec& hi, ax::Vec& lo) {
  const DT t = F64;
  ExpK k = exp_k(t);
  uint64_t mant_mask = (uint64_t{1} << 52) - 1;
  uint64_t one_bits = uint64_t{1023} << 52;
  Mask sub = e.cmp(t, Cmp::kLt, x, C(e, t, std::numeric_limits<double>::min()));
  ax::Vec xs = e.blend(t, sub, e.mul(t, x, C(e, t, 4503599627370496.0)), x);
  ax::Vec ex = e.int_sub(t, e.shr_logical(t, xs, 52), e.const_bits_operand(t, 1023));
  ax::Vec m = e.bit_or(t, e.bit_and(t, xs, e.const_bits_operand(t, mant_mask)), e.const_bits_operand(t, one_bits));
  Mask big = e.cmp(t, Cmp::kGt, m, C(e, t, vmc::kSqrt2));
  m = e.blend(t, big, e.mul(t, m, C(e, t, 0.5)), m);
  ex = e.blend(t, big, e.int_add(t, ex, e.const_bits_operand(t, 1)), ex);
  ex = e.blend(t, sub, e.int_sub(t, ex, e.const_bits_operand(t, 52)), ex);
  ax::Vec f = e.sub(t, m, C(e, t, 1.0));
  ax::Vec u = e.add(t, f, C(e, t, 2.0));
  ax::Vec u_lo = e.add(t, e.sub(t, e.const_vec(t, 2.0), u), f);
  ax::Vec s = e.div(t, f, u);
  ax::Vec negs = e.neg(t, s);
  ax::Vec rem = e.fma(t, negs, u, f);
  rem = e.fma(t, negs, u_lo, rem);
  ax::Vec s_lo = e.div(t, rem, u);
  ax::Vec z = e.mul(t, s, s);
  ax::Vec r = e.mul(t, z, horner(e, t, z, vmc::kLogPolyD));
  ax::Vec ef = e.sub(t, e.int_add(t, ex, e.const_bits_operand(t, bits_of(t, vmc::kRoundMagicD))),
                     C(e, t, vmc::kRoundMagicD));
  ax::Vec a = e.mul(t, ef, C(e, t, k.ln2hi));
  ax::Vec b = e.mul(t, s, C(e, t, 2.0));
  ax::Vec sum = e.add(t, a, b);
  ax::Vec bb = e.sub(t, sum, a);
  ax::Vec err = e.add(t, e.sub(t, a, e.sub(t, sum, bb)), e.sub(t, b, bb));
  ax::Vec tail = e.add(t, err, e.fma(t, ef, C(e, t, k.ln2lo), e.fma(t, s, r, e.mul(t, s_lo, C(e, t, 2.0)))));
  hi = e.add(t, sum, tail);
  lo = e.sub(t, tail, e.sub(t, hi, sum));
  Mask regular = e.mask_and(t, e.cmp(t, Cmp::kGt, x, C(e, t, 0.0)),
                            e.cmp(t, Cmp::kLt, x, C(e, t, std::numeric_limits<double>::infinity())));
  hi = e.blend(t, regular, hi, emit_log(e, t, x));
  lo = e.blend(t, regular, lo, e.zero(t));
}
}  // namespace

// vm::product_exact with an FMA: x*y == p exactly and p in [kPowExactMin, max].
Mask product_exact(VecEmitter& e, const ax::Vec& x, const ax::Vec& y, const ax::Vec& p) {
  const DT t = F64;
  Mask in_range = e.mask_and(t, e.cmp(t, Cmp::kGe, p, C(e, t, vmc::kPowExactMin)),
                             e.cmp(t, Cmp::kLe, p, C(e, t, std::numeric_limits<double>::max())));
  ax::Vec err = e.fnma(t, x, y, p);  // p - x*y, rounded once
  return e.mask_and(t, in_range, e.cmp(t, Cmp::kEq, err, C(e, t, 0.0)));
}

// vm::pow_exact_or (Note [Exact integer powers] in runtime/kernels/cpu/vec_math.h),
// on float64 lanes: r, or |a|^b exactly where b is an integer and the power
// representable.
ax::Vec pow_exact_or(VecEmitter& e, const ax::Vec& a, const ax::Vec& b, const ax::Vec& r) {
  const DT t = F64;
  ax::Vec n = e.abs(t, b);
  Mask b_int = e.mask_and(t, e.cmp(t, Cmp::kEq, e.round(t, b, 0x09), b),
                          e.cmp(t, Cmp::kLt, n, C(e, t, static_cast<double>(1 << vmc::kPowIntBits))));
  n = e.blend(t, b_int, n, e.zero(t));
  ax::Vec result = e.const_vec(t, 1.0);
  ax::Vec base = e.abs(t, a);
  Mask bad;
  for (int i = 0; i < vmc::kPowIntBits; ++i) {
    ax::Vec half = e.mul(t, n, C(e, t, 0.5));
    ax::Vec rest = e.round(t, half, 0x09);
    Mask bit = e.cmp(t, Cmp::kNe, rest, half);
    ax::Vec p = e.mul(t, result, base);
    Mask step_bad = e.mask_and(t, bit, e.mask_not(t, product_exact(e, result, base, p)));
    result = e.blend(t, bit, p, result);
    ax::Vec sq = e.mul(t, base, base);
    Mask sq_bad = e.mask_and(t, e.cmp(t, Cmp::kNe, rest, C(e, t, 0.0)), e.mask_not(t, product_exact(e, base, base, sq)));
    step_bad = e.mask_or(t, step_bad, sq_bad);
    bad = i == 0 ? step_bad : e.mask_or(t, bad, step_bad);
    base = sq;
    n = rest;
  }
  ax::Vec s = e.blend(t, e.cmp(t, Cmp::kLt, b, C(e, t, 0.0)), e.div(t, e.const_vec(t, 1.0), result), result);
  return e.blend(t, e.mask_and(t, b_int, e.mask_not(t, bad)), s, r);
}

ax::Vec emit_pow(VecEmitter& e, DT t, const ax::Vec& a, const ax::Vec& b) {
  if (!f32(t)) {
    ax::Vec lh, ll;
    log_dd(e, e.abs(F64, a), lh, ll);
    ax::Vec y = e.mul(F64, b, lh);
    ax::Vec y_lo = e.add(F64, e.fma(F64, b, lh, e.neg(F64, y)), e.mul(F64, b, ll));
    Mask finite = e.cmp(F64, Cmp::kLt, e.abs(F64, y), C(e, F64, std::numeric_limits<double>::infinity()));
    y_lo = e.blend(F64, finite, y_lo, e.zero(F64));
    ax::Vec r = emit_exp(e, F64, y);
    Mask r_finite = e.cmp(F64, Cmp::kLt, e.abs(F64, r), C(e, F64, std::numeric_limits<double>::infinity()));
    r = e.blend(F64, r_finite, e.fma(F64, r, y_lo, r), r);
    r = pow_exact_or(e, a, b, r);
    return pow_special_cases(e, F64, a, b, r);
  }
  ax::Vec ad = e.cast(F32, F64, e.abs(F32, a));
  ax::Vec bd = e.cast(F32, F64, b);
  ax::Vec r = emit_exp(e, F64, e.mul(F64, bd, emit_log(e, F64, ad)));
  r = pow_exact_or(e, ad, bd, r);
  return pow_special_cases(e, F32, a, b, e.cast(F64, F32, r));
}

}  // namespace wok::jit::x86
