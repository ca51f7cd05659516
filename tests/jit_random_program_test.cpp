// Seeded random programs, each run under the JIT and the precompiled
// kernels, and (for the well-conditioned and the integer flavours) against
// an independent reference that emulates every dtype exactly: float32
// results rounded after each op, integers wrapping, transcendentals in
// double precision.
#include <cstdlib>
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "wok/runtime/cpu_features.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// A value of the reference: doubles for floats, int64 for ints and bools,
// held at the rank-3 shape it has in the program (dims are 1 or base).
struct Ref {
  DType dtype;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<double> scale;  // largest magnitude on the path to each element
  bool via_f32 = false;       // a float32 value is on the path: float32 tolerance
  bool via_sum = false;       // a sum is on the path: backends may add in different orders
  bool floating() const { return wok::is_floating(dtype); }
  double at_f(int64_t k) const { return floating() ? f[k] : static_cast<double>(i[k]); }
};

double round_to(DType t, double v) { return t == DType::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v; }
int64_t wrap(DType t, int64_t v) {
  if (t == DType::kInt32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (t == DType::kBool) return v != 0;
  return v;
}

enum class Flavour { kContinuous, kInteger, kMixed };

struct Program {
  Shape base;
  std::vector<Tensor> vals;  // wok tensors
  std::vector<Ref> refs;     // reference values (when the flavour has one)
  std::ostringstream log;    // readable program, for failure messages
};

int64_t flat_index(const Shape& shape, const Shape& out, int64_t k) {
  // k indexes `out`; map to `shape` (dims of 1 broadcast).
  int64_t idx = 0, stride = 1;
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    int64_t coord = k % out[d];
    k /= out[d];
    if (shape[d] != 1) idx += coord * stride;
    stride *= shape[d];
  }
  return idx;
}

Shape bshape(const Shape& a, const Shape& b) {
  Shape o(a.size());
  for (size_t d = 0; d < a.size(); ++d) o[d] = std::max(a[d], b[d]);
  return o;
}

Ref make_ref(DType t, const Shape& shape) {
  Ref r{t, shape, {}, {}, {}};
  int64_t n = wok::numel(shape);
  if (r.floating()) r.f.resize(n);
  else r.i.resize(n);
  r.scale.resize(n);
  return r;
}

// Applies fn elementwise over broadcast inputs; fn writes element k of out.
void for_each(const std::vector<const Ref*>& in, Ref& out, const std::function<void(int64_t, std::vector<int64_t>&)>& fn) {
  std::vector<int64_t> idx(in.size());
  out.via_f32 = out.dtype == DType::kFloat32;
  for (const Ref* r : in) {
    out.via_f32 = out.via_f32 || r->via_f32;
    out.via_sum = out.via_sum || r->via_sum;
  }
  for (int64_t k = 0; k < wok::numel(out.shape); ++k) {
    double sc = 0;
    for (size_t j = 0; j < in.size(); ++j) {
      idx[j] = flat_index(in[j]->shape, out.shape, k);
      sc = std::max(sc, in[j]->scale[idx[j]]);
    }
    fn(k, idx);
    double mag = out.floating() ? std::abs(out.f[k]) : std::abs(static_cast<double>(out.i[k]));
    out.scale[k] = std::isfinite(mag) ? std::max(sc, mag) : sc;
  }
}

class RandomProgram {
 public:
  RandomProgram(uint64_t seed, Flavour flavour) : rng_(seed), flavour_(flavour) {}

  void build(Program& p) {
    int rank = 3;
    p.base.resize(rank);
    bool big = pick(0, 9) == 0;
    for (int d = 0; d < rank; ++d) p.base[d] = big ? pick(1, 3) * (d == 1 ? 700 : 1) + pick(0, 5) : pick(1, 9);
    int n_inputs = pick(1, 4);
    for (int k = 0; k < n_inputs; ++k) add_input(p);
    int n_ops = pick(1, 30);
    for (int k = 0; k < n_ops; ++k) add_op(p);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool has_ref() const { return flavour_ != Flavour::kMixed; }

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

  void add_input(Program& p) {
    Shape s = p.base;
    for (auto& d : s)
      if (pick(0, 3) == 0) d = 1;
    DType t = input_dtype();
    int64_t n = wok::numel(s);
    Ref r = make_ref(t, s);
    r.via_f32 = t == DType::kFloat32;
    std::vector<double> fv(n);
    std::vector<int64_t> iv(n);
    for (int64_t k = 0; k < n; ++k) {
      if (wok::is_floating(t)) {
        double v = uniform(-3, 3);
        if (flavour_ == Flavour::kMixed && pick(0, 40) == 0) v = pick(0, 1) ? INFINITY : NAN;
        fv[k] = round_to(t, v);
        r.f[k] = fv[k];
        r.scale[k] = std::abs(fv[k]);
      } else {
        iv[k] = t == DType::kBool ? pick(0, 1) : pick(-50, 50);
        r.i[k] = iv[k];
        r.scale[k] = std::abs(static_cast<double>(iv[k]));
      }
    }
    Tensor x;
    switch (t) {
      case DType::kFloat32: x = wok::from_vector(std::vector<float>(fv.begin(), fv.end()), s); break;
      case DType::kFloat64: x = wok::from_vector(fv, s); break;
      case DType::kInt32: x = wok::from_vector(std::vector<int32_t>(iv.begin(), iv.end()), s); break;
      case DType::kInt64: x = wok::from_vector(iv, s); break;
      case DType::kBool: x = wok::from_vector(std::vector<bool>(iv.begin(), iv.end()), s); break;
    }
    p.log << "  %" << p.vals.size() << " = input " << wok::dtype_name(t) << wok::shape_str(s) << "\n";
    p.vals.push_back(x);
    p.refs.push_back(std::move(r));
  }

  int operand(const Program& p) {
    // Favour recent values, so programs form chains rather than fans.
    int n = static_cast<int>(p.vals.size());
    int back = std::min(n - 1, std::abs(static_cast<int>(std::normal_distribution<double>(0, 3)(rng_))));
    return n - 1 - back;
  }

  void add_op(Program& p);

  std::mt19937_64 rng_;
  Flavour flavour_;
};

// Reference arithmetic on one element.
double fop(const std::string& op, double x) {
  if (op == "exp") return std::exp(x);
  if (op == "tanh") return std::tanh(x);
  if (op == "sigmoid") return 1 / (1 + std::exp(-x));
  if (op == "sin") return std::sin(x);
  if (op == "cos") return std::cos(x);
  if (op == "erf") return std::erf(x);
  if (op == "log1p_abs") return std::log(std::abs(x) + 1);
  if (op == "sqrt_abs") return std::sqrt(std::abs(x));
  if (op == "gelu") return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  if (op == "silu") return x / (1 + std::exp(-x));
  if (op == "neg") return -x;
  if (op == "abs") return std::abs(x);
  if (op == "square") return x * x;
  return NAN;
}

void RandomProgram::add_op(Program& p) {
  const int a = operand(p);
  const Tensor& A = p.vals[a];
  std::string name;
  Tensor y;
  Ref out;
  bool ref_ok = has_ref();

  static const char* kContinuousUnary[] = {"exp", "tanh", "sigmoid", "sin", "cos", "erf", "log1p_abs",
                                           "sqrt_abs", "gelu", "silu", "neg", "abs", "square"};
  static const char* kBinary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
  int kind = pick(0, 9);
  if (flavour_ == Flavour::kContinuous) {
    if (kind < 4) {
      name = kContinuousUnary[pick(0, 12)];
      if (name == "exp") y = wok::exp(wok::tanh(A) * 3.0);  // bounded argument
      else if (name == "log1p_abs") y = wok::log(wok::abs(A) + 1.0);
      else if (name == "sqrt_abs") y = wok::sqrt(wok::abs(A));
      else if (name == "tanh") y = wok::tanh(A);
      else if (name == "sigmoid") y = wok::sigmoid(A);
      else if (name == "sin") y = wok::sin(A);
      else if (name == "cos") y = wok::cos(A);
      else if (name == "erf") y = wok::erf(A);
      else if (name == "gelu") y = wok::gelu(A);
      else if (name == "silu") y = wok::silu(A);
      else if (name == "neg") y = -A;
      else if (name == "abs") y = wok::abs(A);
      else y = wok::square(wok::tanh(A) * 4.0);
      out = make_ref(y.dtype(), y.shape());
      const Ref& ra = p.refs[a];
      for_each({&ra}, out, [&](int64_t k, std::vector<int64_t>& i) {
        double x = ra.at_f(i[0]);
        DType t = y.dtype();
        // The wrappers round their intermediate steps like wok does.
        if (name == "exp") x = round_to(t, round_to(t, std::tanh(x)) * 3);
        if (name == "log1p_abs") x = round_to(t, std::abs(x) + 1), name = "log1p_abs";
        if (name == "square") x = round_to(t, round_to(t, std::tanh(x)) * 4);
        double v;
        if (name == "log1p_abs") v = std::log(x);
        else v = fop(name, x);
        out.f[k] = round_to(t, v);
      });
    } else if (kind < 9) {
      int b = operand(p);
      name = kBinary[pick(0, 5)];
      const Tensor& B = p.vals[b];
      if (name == "add") y = A + B;
      else if (name == "sub") y = A - B;
      else if (name == "mul") y = A * B;
      else if (name == "div") y = A / (wok::abs(B) + 1.0);
      else if (name == "maximum") y = wok::maximum(A, B);
      else y = wok::minimum(A, B);
      out = make_ref(y.dtype(), y.shape());
      const Ref &ra = p.refs[a], &rb = p.refs[b];
      DType t = y.dtype();
      for_each({&ra, &rb}, out, [&](int64_t k, std::vector<int64_t>& i) {
        double x = round_to(t, ra.at_f(i[0])), z = round_to(t, rb.at_f(i[1]));
        double v;
        if (name == "add") v = x + z;
        else if (name == "sub") v = x - z;
        else if (name == "mul") v = x * z;
        else if (name == "div") v = x / round_to(t, std::abs(z) + 1);
        else if (name == "maximum") v = std::max(x, z);
        else v = std::min(x, z);
        out.f[k] = round_to(t, v);
      });
    } else {
      name = "sum";
      int axis = pick(0, 2);
      y = wok::sum(A, {axis}, true);
      out = make_ref(y.dtype(), y.shape());
      const Ref& ra = p.refs[a];
      out.via_f32 = ra.via_f32 || out.dtype == DType::kFloat32;
      out.via_sum = true;
      // Sum over `axis` of the operand's own shape.
      for (int64_t k = 0; k < wok::numel(out.shape); ++k) {
        Shape idx(3);
        int64_t rem = k;
        for (int d = 2; d >= 0; --d) {
          idx[d] = rem % out.shape[d];
          rem /= out.shape[d];
        }
        double acc = 0, sc = 0;
        for (int64_t j = 0; j < ra.shape[axis]; ++j) {
          Shape ii = idx;
          ii[axis] = j;
          int64_t f = (ii[0] * ra.shape[1] + ii[1]) * ra.shape[2] + ii[2];
          acc += ra.f[f];
          sc = std::max(sc, ra.scale[f] * static_cast<double>(ra.shape[axis]));
        }
        out.f[k] = round_to(y.dtype(), acc);
        out.scale[k] = std::max(sc, std::abs(acc));
      }
    }
  } else if (flavour_ == Flavour::kInteger) {
    int b = operand(p);
    const Tensor& B = p.vals[b];
    static const char* kIntOps[] = {"add", "sub", "mul", "maximum", "minimum", "neg", "abs",
                                    "eq",  "lt",  "ge",  "where",   "logical_and", "cast"};
    name = kIntOps[pick(0, 12)];
    DType at = A.dtype(), bt = B.dtype();
    bool a_bool = at == DType::kBool;
    if ((name == "sub" || name == "neg" || name == "abs") && a_bool) name = "add";
    if (name == "sub" && bt == DType::kBool) name = "mul";
    if (name == "add") y = A + B;
    else if (name == "sub") y = A - B;
    else if (name == "mul") y = A * B;
    else if (name == "maximum") y = wok::maximum(A, B);
    else if (name == "minimum") y = wok::minimum(A, B);
    else if (name == "neg") y = -A;
    else if (name == "abs") y = wok::abs(A);
    else if (name == "eq") y = A == B;
    else if (name == "lt") y = A < B;
    else if (name == "ge") y = A >= B;
    else if (name == "where") y = wok::where(A > 0, A, B);
    else if (name == "logical_and") y = wok::logical_and(A, B);
    else y = wok::cast(A, pick(0, 1) ? DType::kInt32 : DType::kInt64);
    out = make_ref(y.dtype(), y.shape());
    const Ref &ra = p.refs[a], &rb = p.refs[b];
    DType t = y.dtype();
    DType ct = wok::promote_types(at, bt);
    if (ct == DType::kBool && (name == "add" || name == "mul" || name == "sub")) ct = DType::kInt32;
    bool unary = name == "neg" || name == "abs" || name == "cast";
    std::vector<const Ref*> ins = unary ? std::vector<const Ref*>{&ra} : std::vector<const Ref*>{&ra, &rb};
    for_each(ins, out, [&](int64_t k, std::vector<int64_t>& i) {
      int64_t x = ra.i[i[0]], z = unary ? 0 : rb.i[i[1]];
      uint64_t ux = static_cast<uint64_t>(wrap(ct, x)), uz = static_cast<uint64_t>(wrap(ct, z));
      int64_t v = 0;
      if (name == "add") v = static_cast<int64_t>(ux + uz);
      else if (name == "sub") v = static_cast<int64_t>(ux - uz);
      else if (name == "mul") v = static_cast<int64_t>(ux * uz);
      else if (name == "maximum") v = std::max(x, z);
      else if (name == "minimum") v = std::min(x, z);
      else if (name == "neg") v = static_cast<int64_t>(0 - static_cast<uint64_t>(x));
      else if (name == "abs") v = x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
      else if (name == "eq") v = x == z;
      else if (name == "lt") v = x < z;
      else if (name == "ge") v = x >= z;
      else if (name == "where") v = x > 0 ? x : z;
      else if (name == "logical_and") v = (x != 0) && (z != 0);
      else v = x;
      out.i[k] = wrap(t, v);
    });
  } else {
    // Mixed: anything, compared JIT against precompiled only.
    ref_ok = false;
    int b = operand(p), c = operand(p);
    const Tensor &B = p.vals[b], &C = p.vals[c];
    switch (pick(0, 21)) {
      case 0: name = "add"; y = A + B; break;
      case 1: name = "sub"; y = (A.dtype() == DType::kBool ? A.astype(DType::kInt32) : A) - B.astype(DType::kInt64); break;
      case 2: name = "mul"; y = A * B; break;
      case 3: name = "div"; y = A / B; break;
      case 4: name = "pow"; y = wok::pow(A.astype(DType::kFloat32), B.astype(DType::kFloat32)); break;
      case 5: name = "maximum"; y = wok::maximum(A, B); break;
      case 6: name = "lt"; y = A < B; break;
      case 7: name = "ne"; y = A != B; break;
      case 8: name = "where"; y = wok::where(A, B, C); break;
      case 9: name = "clamp"; y = wok::clamp(A.dtype() == DType::kBool ? A.astype(DType::kInt32) : A, -1.5, 2.0); break;
      case 10: name = "cast"; y = wok::cast(A, wok::kAllDTypes[pick(0, 4)]); break;
      case 11: name = "exp"; y = wok::exp(A); break;
      case 12: name = "log"; y = wok::log(A); break;
      case 13: name = "sin"; y = wok::sin(A * 10); break;
      case 14: name = "tanh"; y = wok::tanh(A); break;
      case 15: name = "floor"; y = wok::floor(A.dtype() == DType::kBool ? A.astype(DType::kFloat64) : A); break;
      case 16: name = "round"; y = wok::round(A.dtype() == DType::kBool ? A.astype(DType::kFloat32) : A * 2.5f); break;
      case 17: name = "logical_or"; y = wok::logical_or(A, B); break;
      case 18: name = "erf"; y = wok::erf(A); break;
      case 19: name = "reciprocal"; y = wok::reciprocal(A); break;
      // max, not sum: an order-independent reduction keeps JIT and
      // precompiled bitwise equal however the two add things up.
      case 20: name = "max"; y = wok::max(A, {pick(0, 2)}, true); break;
      default: name = "relu"; y = wok::relu(A.dtype() == DType::kBool ? A.astype(DType::kInt32) : A); break;
    }
  }
  p.log << "  %" << p.vals.size() << " = " << name << "(%" << a << ") -> " << wok::dtype_name(y.dtype())
        << wok::shape_str(y.shape()) << "\n";
  p.vals.push_back(y);
  if (ref_ok) p.refs.push_back(std::move(out));
  else p.refs.push_back(make_ref(y.dtype(), y.shape()));
}

bool same_bits(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Runs one random program; returns "" or a description of the mismatch.
std::string check_program(uint64_t seed, Flavour flavour) {
  Program p;
  RandomProgram(seed, flavour).build(p);
  // Outputs: the last value and a few random others.
  std::vector<int> outs = {static_cast<int>(p.vals.size()) - 1};
  std::mt19937 r(static_cast<uint32_t>(seed));
  for (int k = 0; k < 2; ++k) outs.push_back(static_cast<int>(r() % p.vals.size()));

  auto run = [&](wok::Backend backend) {
    wok::set_backend(backend);
    // Rebuild the graph from the recorded program: re-running the same
    // generator gives the same ops, now traced under this backend.
    Program q;
    RandomProgram(seed, flavour).build(q);
    std::vector<Tensor> ts;
    for (int o : outs) ts.push_back(q.vals[o]);
    wok::eval(ts);
    std::vector<std::vector<double>> res;
    for (Tensor& t : ts) res.push_back(t.to_vector<double>());
    return res;
  };
  auto jit = run(wok::Backend::kJit);
  auto pre = run(wok::Backend::kPrecompiled);
  wok::set_backend(wok::Backend::kJit);
  for (size_t j = 0; j < outs.size(); ++j) {
    // Bitwise, except downstream of a sum (reassociated differently).
    const Ref& ref = p.refs[outs[j]];
    bool reassociated = flavour != Flavour::kMixed && ref.via_sum;
    for (size_t k = 0; k < jit[j].size(); ++k) {
      bool same = same_bits(jit[j][k], pre[j][k]);
      if (!same && reassociated) {
        double tol = (ref.via_f32 ? 2e-4 : 1e-9) * (1 + ref.scale[k]);
        same = std::abs(jit[j][k] - pre[j][k]) <= tol;
      }
      if (!same) {
        std::ostringstream m;
        m << "seed " << seed << ": JIT and precompiled differ at output %" << outs[j] << "[" << k << "]: " << jit[j][k]
          << " vs " << pre[j][k] << "\nprogram:\n"
          << p.log.str();
        return m.str();
      }
    }
  }
  if (flavour == Flavour::kMixed) return "";
  for (size_t j = 0; j < outs.size(); ++j) {
    const Ref& ref = p.refs[outs[j]];
    bool f32 = ref.via_f32;
    for (size_t k = 0; k < jit[j].size(); ++k) {
      double want = ref.floating() ? ref.f[k] : static_cast<double>(ref.i[k]);
      double got = jit[j][k];
      double tol = ref.floating() ? (f32 ? 2e-4 : 1e-9) * (1 + ref.scale[k]) : 0;
      bool ok = std::isnan(want) ? std::isnan(got) : std::isinf(want) ? got == want : std::abs(got - want) <= tol;
      if (!ok) {
        std::ostringstream m;
        m.precision(17);
        m << "seed " << seed << ": output %" << outs[j] << "[" << k << "] = " << got << ", reference " << want
          << " (tolerance " << tol << ")\nprogram:\n"
          << p.log.str();
        return m.str();
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
  // 2,000 programs across the three flavours (700 + 650 + 650).
  const int count = GetParam() == Flavour::kContinuous ? 700 : 650;
  const uint64_t base = 1000003ull * (static_cast<uint64_t>(GetParam()) + 1);
  // WOK_TEST_SEED=N checks only program N (the seed a failure names);
  // WOK_TEST_VERBOSE=1 prints each seed before it runs, to find a crash.
  const char* only = std::getenv("WOK_TEST_SEED");
  const bool verbose = std::getenv("WOK_TEST_VERBOSE") != nullptr;
  int failures = 0;
  for (int i = 0; i < count && failures < 3; ++i) {
    const uint64_t seed = base + static_cast<uint64_t>(i);
    if (only && std::strtoull(only, nullptr, 10) != seed) continue;
    if (verbose) std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(seed));
    std::string msg = check_program(seed, GetParam());
    if (!msg.empty()) {
      ADD_FAILURE() << msg;
      ++failures;
    }
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
