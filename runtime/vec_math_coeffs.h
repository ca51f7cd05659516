// Constants of wok's vector math: the range reductions and polynomials that
// the precompiled kernels (runtime/kernels/cpu/vec_math.h) evaluate in C++
// and the JIT emits as machine code. Both read them from here, so the two
// paths compute the same thing (Note [One formula per op]).
//
// Polynomials are in Horner order, highest degree first unless noted.
#pragma once

#include <cstddef>
#include <iterator>

namespace wok::vmc {

// ---- exp, expm1 ---------------------------------------------------------------
// x = n ln2 + r, |r| <= ln2/2; e^r - 1 = r + r^2 * P(r). ln2 is split so that
// n * kLn2Hi is exact for the n that occur.
inline constexpr float kLog2eF = 1.44269504088896341f;
inline constexpr float kLn2HiF = 0.693145751953125f;
inline constexpr float kLn2LoF = 1.428606765330187045e-06f;
// Taylor coefficients 1/k! for k = 7..2 (P has degree 5 for float).
inline constexpr float kExpPolyF[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f};
// e^r itself for exp, degree 6: 1 + r + r^2 (c2 + ... + c6 r^4), with
// c2..c6 fitted (weighted least squares, reweighted towards minimax) for
// the relative error of e^r on |r| <= ln2/2: 3.1e-9 in exact arithmetic;
// evaluated in float32 by Horner's rule, at most 0.72 ulp over 4 million
// r, where the degree 7 Taylor form of expm1 plus one gave 0.89 (Note
// [Direct exp polynomial] in runtime/kernels/cpu/vec_math.h).
inline constexpr float kExpDirectPolyF[] = {0x1.6a244cp-10f,  // 0.00138146128
                                            0x1.1239d4p-7f,   // 0.00836871006
                                            0x1.5558f2p-5f,   // 0.041668389
                                            0x1.555492p-3f,   // 0.166665211
                                            0x1.fffffcp-2f,   // 0.49999994
                                            1.0f,
                                            1.0f};
// exp for values that reach only float16 and bfloat16 results (Note
// [Half-grade exp] in jit/x86/instr_emitter.cpp): x = n ln2 + r with ln2
// rounded to float32 once, and e^r of degree 5, fitted minimax for the
// relative error with all six coefficients free. Evaluated as the JIT does
// over every float32 x in [-104, 0]: 2^-21.0 relative at most (2^-22.0
// for x > -17, where float16 results are not 0), 1/1000 of a float16 ulp.
inline constexpr float kLn2F = 0x1.62e430p-1f;
inline constexpr float kExpHalfPolyF[] = {0x1.0fe5c6p-7f, 0x1.575eeep-5f, 0x1.555a18p-3f,
                                          0x1.fffd1ap-2f, 0x1.fffff6p-1f, 0x1.000002p+0f};
// Inputs are clamped to [kExpMinF, kExpMaxF]: below, e^x rounds to 0; above, to inf.
inline constexpr float kExpMinF = -104.0f;
inline constexpr float kExpMaxF = 89.0f;

inline constexpr double kLog2eD = 1.4426950408889634074;
inline constexpr double kLn2HiD = 6.93147180369123816490e-01;
inline constexpr double kLn2LoD = 1.90821492927058770002e-10;
// 1/k! for k = 13..2.
inline constexpr double kExpPolyD[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                       1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,
                                       1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,        0.5};
// 1/k! for k = 13..0 (Taylor: its remainder is below 1e-17 here): P's
// coefficients followed by those of r and 1, so e^r = 1 + r + r^2 P(r).
template <std::size_t N>
struct ExpDirectPoly {
  double c[N + 2];
};
template <std::size_t N>
constexpr ExpDirectPoly<N> then_one_one(const double (&p)[N]) {
  ExpDirectPoly<N> d{};
  for (std::size_t i = 0; i < N; ++i) d.c[i] = p[i];
  d.c[N] = d.c[N + 1] = 1.0;
  return d;
}
inline constexpr ExpDirectPoly<std::size(kExpPolyD)> kExpDirectPolyDHolder = then_one_one(kExpPolyD);
inline constexpr const auto& kExpDirectPolyD = kExpDirectPolyDHolder.c;
inline constexpr double kExpMinD = -746.0;
inline constexpr double kExpMaxD = 710.0;

// Adding then subtracting 1.5 * 2^mantissa_bits rounds to the nearest
// integer (ties to even) and leaves that integer in the low mantissa bits.
inline constexpr float kRoundMagicF = 12582912.0f;              // 1.5 * 2^23
inline constexpr double kRoundMagicD = 6755399441055744.0;      // 1.5 * 2^52

// ---- log ----------------------------------------------------------------------
// x = 2^e m, m in [sqrt(1/2), sqrt(2)); f = m - 1, s = f / (2 + f), z = s^2;
// log(1 + f) = f - hf + s (hf + R(z)), hf = f^2 / 2, R(z) = z * Q(z) with
// Q's Taylor coefficients 2/(2k+1), highest first.
inline constexpr float kLogPolyF[] = {2.0f / 11, 2.0f / 9, 2.0f / 7, 2.0f / 5, 2.0f / 3};
inline constexpr double kLogPolyD[] = {2.0 / 23, 2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13,
                                       2.0 / 11, 2.0 / 9,  2.0 / 7,  2.0 / 5,  2.0 / 3};
inline constexpr double kSqrt2 = 1.41421356237309504880;

// ---- sin, cos (float32 is computed in double) ------------------------------------
// x = n pi/2 + r, |r| <= pi/4. pi/2 is split into parts of 26 significant
// bits, so n * part is exact for |n| < 2^27 (Cody and Waite). Beyond
// kSinCosMax the reduction would be wrong, and wok returns nan rather than
// a wrong number: it has no Payne-Hanek reduction.
inline constexpr double kTwoOverPi = 0.63661977236758134308;
inline constexpr double kPio2Part1 = 1.5707963109016418;
inline constexpr double kPio2Part2 = 1.5893254712295857e-08;
inline constexpr double kPio2Part3 = 6.123233932053594e-17;
inline constexpr double kPio2Part4 = 6.36831716351095e-25;
inline constexpr double kSinCosMax = 2.1e8;  // < 2^27 * pi/2
// sin r = r + r^3 S(r^2): S's Taylor coefficients (-1)^k/(2k+1)!, k = 9..1.
inline constexpr double kSinPoly[] = {-1.0 / 121645100408832000.0, 1.0 / 355687428096000.0, -1.0 / 1307674368000.0,
                                      1.0 / 6227020800.0,         -1.0 / 39916800.0,      1.0 / 362880.0,
                                      -1.0 / 5040.0,              1.0 / 120.0,            -1.0 / 6.0};
// cos r = 1 - r^2/2 + r^4 C(r^2): C's coefficients (-1)^k/(2k)!, k = 9..2.
inline constexpr double kCosPoly[] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                      1.0 / 479001600.0,         -1.0 / 3628800.0,       1.0 / 40320.0,
                                      -1.0 / 720.0,              1.0 / 24.0};

// ---- tanh ----------------------------------------------------------------------
// tanh |x| = em / (em + 2), em = expm1(2|x|); 1 beyond kTanhOne.
inline constexpr float kTanhOneF = 9.1f;
inline constexpr double kTanhOneD = 19.1;

// ---- erf -----------------------------------------------------------------------
// |x| < kErfSmall: erf x = x P(x^2), Taylor coefficients 2/sqrt(pi) (-1)^n/(n!(2n+1)),
// highest degree first.
inline constexpr double kErfSmall = 0.9;
inline constexpr float kErfTaylorF[] = {
    1.48071928158792172395e-8f, -1.63658446912349243174e-7f, 1.64621143658892474016e-6f,
    -1.49256503584062509775e-5f, 1.2055332981789664251e-4f,   -8.54832702345085283255e-4f,
    5.22397762544218784211e-3f,  -2.68661706451312517594e-2f, 0.11283791670955125739f,
    -0.376126389031837524632f,   1.1283791670955125739f};
inline constexpr double kErfTaylorD[] = {
    -9.0639708428086724792e-17, 1.63426140953671518943e-15, -2.7835162072109213549e-14,
    4.46322426328647734493e-13, -6.71136685516411037793e-12, 9.42275906465041097062e-11,
    -1.2290555301717927353e-9,  1.48071928158792172395e-8,   -1.63658446912349243174e-7,
    1.64621143658892474016e-6,  -1.49256503584062509775e-5,  1.2055332981789664251e-4,
    -8.54832702345085283255e-4, 5.22397762544218784211e-3,   -2.68661706451312517594e-2,
    0.11283791670955125739,     -0.376126389031837524632,    1.1283791670955125739};
// kErfSmall <= |x| < kErfOne: erf x = 1 - e^(-x^2) G(u), u = (1/(1+|x|) - mid) * scale,
// G fitted (least squares on Chebyshev nodes, relative error) over [0.9, kErfOne];
// highest degree first.
inline constexpr float kErfOneF = 4.0f;
inline constexpr float kErfcMidF = 0.36315789473684210526f;
inline constexpr float kErfcScaleF = 6.129032258064516129f;
inline constexpr float kErfcPolyF[] = {-3.3294851751098828512e-8f, 4.8274325507339564023e-7f,
                                       -1.4710511847799092518e-6f, -5.0896445975273281251e-6f,
                                       6.3273964378142223267e-5f,  -1.3094425750523411192e-4f,
                                       -1.8322772196568908847e-3f, 0.012402691948667619863f,
                                       0.16153660446290077555f,    0.28449841371619815546f};
inline constexpr double kErfOneD = 6.0;
inline constexpr double kErfcMidD = 0.33458646616541353383;
inline constexpr double kErfcScaleD = 5.2156862745098039216;
inline constexpr double kErfcPolyD[] = {
    1.1998894113311348529e-13,  -1.0806764686772605203e-11, 3.760492816096876963e-11,
    -2.198228199153275717e-12,  -3.3195728750321108721e-10, 1.308130852696944317e-9,
    -2.030431936653863877e-9,   -5.8380534747652817525e-9,  4.7730212217605018579e-8,
    -1.2596833225019069644e-7,  -9.6964920376968861923e-8,  2.1045218181159528272e-6,
    -6.8587159282630095695e-6,  -7.5938687771268895056e-6,  1.5135731644411986398e-4,
    -3.5919800655859007204e-4,  -2.7921410298991059369e-3,  0.018417991393579778531,
    0.18452523575004505681,     0.2566009360330253822};

// ---- pow ----------------------------------------------------------------------
// Integer-valued exponents below 2^kPowIntBits in magnitude are also
// computed by squaring, whose result replaces exp(b log a) when every
// product is exact and at least kPowExactMin (there a nonzero rounding
// error cannot round to 0): Note [Exact integer powers] in
// runtime/kernels/cpu/vec_math.h.
inline constexpr int kPowIntBits = 11;
inline constexpr double kPowExactMin = 0x1p-968;

// ---- composite formulas (runtime/ops/formula_helpers.h) --------------------------
// These are evaluated by formulas, so in every backend from one expression:
// rounded after each + and * (formulas have no fused multiply-add).
//
// atan t = t + t z A(z), z = t^2, for |t| <= 7/16: A is a Chebyshev fit
// (mpmath chebyfit) of (atan(t)/t - 1)/z over z in [0, (7/16)^2]; relative
// error of the fit below 2^-27 (float32, degree 4) and 2^-56 (float64, degree 10).
inline constexpr float kAtanPolyF[] = {-6.215811521e-02f, 1.066838577e-01f, -1.425657570e-01f, 1.999931484e-01f,
                                       -3.333333135e-01f};
inline constexpr double kAtanPolyD[] = {-1.75472351572900052e-02, 3.78252186610671184e-02, -5.03394277648584812e-02,
                                        5.84772472064510607e-02,  -6.66323929910713625e-02, 7.69208734876716815e-02,
                                        -9.09090019556014761e-02, 1.11111109005604752e-01,  -1.42857142831486400e-01,
                                        1.99999999999877692e-01,  -3.33333333333333259e-01};
// atan's reduction points atan(1/2), pi/4, pi/2, pi, each split hi + lo
// with hi the constant rounded to the format (float32's lo apart).
inline constexpr double kAtanHalfHiD = 4.63647609000806094e-01, kAtanHalfLoD = 2.26987774529616871e-17;
inline constexpr double kPio4HiD = 7.85398163397448279e-01, kPio4LoD = 3.06161699786838302e-17;
inline constexpr double kPio2HiD = 1.57079632679489656e+00, kPio2LoD = 6.12323399573676604e-17;
inline constexpr double kPiHiD = 3.14159265358979312e+00, kPiLoD = 1.22464679914735321e-16;
inline constexpr float kAtanHalfHiF = 4.636476040e-01f, kAtanHalfLoF = 5.012158688e-09f;
inline constexpr float kPio4HiF = 7.853981853e-01f, kPio4LoF = -2.185569414e-08f;
inline constexpr float kPio2HiF = 1.570796371e+00f, kPio2LoF = -4.371138829e-08f;
inline constexpr float kPiHiF = 3.141592741e+00f, kPiLoF = -8.742277657e-08f;
// sinh x = x + x z S(z), z = x^2, for |x| < 1: S a Chebyshev fit of
// (sinh(x)/x - 1)/z over [0, 1]; fit error below 2^-32 (float32, degree 3)
// and 2^-61 (float64, degree 6).
inline constexpr float kSinhPolyF[] = {2.806280236e-06f, 1.983810216e-04f, 8.333339356e-03f, 1.666666716e-01f};
inline constexpr double kSinhPolyD[] = {7.74617859301882728e-13, 1.60576796238016376e-10, 2.50521176959078228e-08,
                                        2.75573191913818156e-06, 1.98412698413241977e-04, 8.33333333333329852e-03,
                                        1.66666666666666657e-01};

}  // namespace wok::vmc
