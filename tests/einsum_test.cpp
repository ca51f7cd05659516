// wok::einsum against a brute-force float64 evaluation of the same
// equation (every assignment of the labels, products summed into the
// output), on both CPU backends: ONNX's Einsum tests (batch diagonal,
// batch matmul, inner product, sum, transpose), implicit outputs, "..." in
// any position with broadcasting, size-1 broadcasting of letters,
// diagonals, three and four operands, 0-d operands, empty dims, integer
// and mixed dtypes; the contractions costing one GEMM under the JIT, with
// transposed operands read in place; and the errors, naming the equation
// and the shapes.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// ---- the reference ----------------------------------------------------------------

struct Operand {
  Shape shape;
  std::vector<double> v;
};

// Labels of one term: letters as themselves, the dims under "..." as
// '0' + i, right-aligned over the widest "...".
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// The equation evaluated by brute force; `out_shape` gets the result's shape.
std::vector<double> reference(std::string eq, const std::vector<Operand>& ops, Shape* out_shape) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::vector<std::string> terms = split(eq.substr(0, arrow), ',');
  int widest = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    if (dots != std::string::npos)
      widest = std::max(widest, static_cast<int>(ops[i].shape.size() - (terms[i].size() - 3)));
  }
  auto expand = [&](const std::string& t, int under) {
    std::string e;
    for (size_t p = 0; p < t.size(); ++p) {
      if (t.compare(p, 3, "...") == 0) {
        for (int d = 0; d < under; ++d) e += static_cast<char>('0' + widest - under + d);
        p += 2;
      } else {
        e += t[p];
      }
    }
    return e;
  };
  std::vector<std::string> labels;
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool dots = terms[i].find("...") != std::string::npos;
    labels.push_back(expand(terms[i], dots ? static_cast<int>(ops[i].shape.size() - (terms[i].size() - 3)) : 0));
    for (size_t d = 0; d < labels[i].size(); ++d) size[labels[i][d]] = std::max(size[labels[i][d]], ops[i].shape[d]);
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = expand(eq.substr(arrow + 2), widest);
  } else {
    for (int d = 0; d < widest; ++d) out += static_cast<char>('0' + d);
    std::map<char, int> count;
    for (const std::string& t : terms)
      for (char c : t)
        if (c != '.') ++count[c];
    for (auto [c, n] : count)  // std::map: ASCII order
      if (n == 1) out += c;
  }
  out_shape->clear();
  for (char c : out) out_shape->push_back(size[c]);
  std::vector<double> result(static_cast<size_t>(wok::numel(*out_shape)), 0.0);
  std::vector<char> all;
  for (auto [c, n] : size) all.push_back(c);
  std::map<char, int64_t> at;
  for (char c : all) at[c] = 0;
  int64_t combos = 1;
  for (char c : all) combos *= size[c];
  for (int64_t k = 0; k < combos; ++k) {
    for (int64_t r = k, i = static_cast<int64_t>(all.size()) - 1; i >= 0; --i) {
      at[all[i]] = r % size[all[i]];
      r /= size[all[i]];
    }
    double p = 1;
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < labels[i].size(); ++d)
        flat = flat * ops[i].shape[d] + (ops[i].shape[d] == 1 ? 0 : at[labels[i][d]]);
      p *= ops[i].v[static_cast<size_t>(flat)];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[static_cast<size_t>(o)] += p;
  }
  return result;
}

// ---- cases --------------------------------------------------------------------------

Operand random_operand(Shape shape, uint32_t seed) {
  Operand o{std::move(shape), {}};
  o.v = wt::random_values<double>(static_cast<size_t>(wok::numel(o.shape)), -1, 1, seed);
  for (double& x : o.v) x = static_cast<float>(x);  // exact in float32 too
  return o;
}

// einsum(eq) of random operands of `shapes`, in float32 and float64,
// against the reference.
void check(const std::string& eq, const std::vector<Shape>& shapes, uint32_t seed = 1) {
  SCOPED_TRACE("\"" + eq + "\"");
  std::vector<Operand> ops;
  for (const Shape& s : shapes) ops.push_back(random_operand(s, seed++));
  Shape want_shape;
  const std::vector<double> want = reference(eq, ops, &want_shape);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    std::vector<Tensor> ts;
    for (const Operand& o : ops) ts.push_back(wok::from_vector(o.v, o.shape).astype(t));
    Tensor y = wok::einsum(eq, ts);
    EXPECT_EQ(y.shape(), want_shape) << wt::dname(t);
    // Sums of at most a few dozen products of values in [-1, 1].
    if (t == DType::kFloat32) EXPECT_TRUE(wt::close<float>(eq, y, want, 0, 1e-5));
    else EXPECT_TRUE(wt::close<double>(eq, y, want, 0, 1e-13));
  }
}

class Einsum : public wt::BothBackends {};

// The equations of ONNX's backend tests for Einsum, with their shapes.
TEST_P(Einsum, OnnxTests) {
  check("...ii ->...i", {{3, 5, 5}});            // einsum_batch_diagonal
  check("bij, bjk -> bik", {{5, 2, 3}, {5, 3, 4}});  // einsum_batch_matmul
  check("i,i", {{5}, {5}});                       // einsum_inner_prod
  check("ij->i", {{3, 4}});                       // einsum_sum
  check("ij->ji", {{3, 4}});                      // einsum_transpose
}

TEST_P(Einsum, MatmulsAndProducts) {
  check("ij,jk->ik", {{3, 4}, {4, 5}});
  check("ij,jk", {{3, 4}, {4, 5}});           // implicit: ik
  check("ij,kj->ik", {{3, 4}, {5, 4}});       // b transposed
  check("ji,jk->ik", {{4, 3}, {4, 5}});       // a transposed
  check("ba,cb", {{4, 3}, {5, 4}});           // implicit: ac
  check("bij,bkj->bik", {{2, 3, 4}, {2, 5, 4}});
  check("ibj,jbk->bik", {{3, 2, 4}, {4, 2, 5}});  // batch dim in the middle: permuted
  check("abcd,cdbe->ae", {{2, 3, 4, 2}, {4, 2, 3, 3}});  // two summed, two kept letters
  check("i,j->ij", {{3}, {4}});               // outer
  check("i,j", {{3}, {4}});
  check("ij,ij->ij", {{3, 4}, {3, 4}});       // Hadamard
  check("ij,ij->i", {{3, 4}, {3, 4}});        // row-wise dots
  check("ij,ij->", {{3, 4}, {3, 4}});
  check("ij,i->j", {{3, 4}, {3}});            // vector-matrix
  check("ij,j->i", {{3, 4}, {4}});            // matrix-vector
  check("Ab,bC", {{2, 3}, {3, 4}});           // upper case sorts first: AC
  check("ij,jk->ki", {{3, 4}, {4, 5}});       // output transposed
}

TEST_P(Einsum, SingleOperand) {
  check("ij", {{3, 4}});
  check("ji", {{3, 4}});                      // implicit: ij, a transpose
  check("ij->", {{3, 4}});
  check("ii", {{4, 4}});                      // trace
  check("ii->i", {{4, 4}});
  check("iii->i", {{3, 3, 3}});
  check("iij->ji", {{3, 3, 2}});
  check("ijij->ij", {{2, 3, 2, 3}});           // two diagonals
  check("ijk->kji", {{2, 3, 4}});
  check("ijk->j", {{2, 3, 4}});
}

TEST_P(Einsum, Ellipsis) {
  check("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}});  // "..." broadcast: [2, 1] with [5] -> [2, 5]
  check("...ij,...jk", {{2, 3, 4}, {4, 5}});             // implicit: "..." first
  check("i...,i...->...", {{3, 2, 4}, {3, 2, 4}});
  check("a...b,b...->a...", {{2, 3, 4}, {4, 3}});         // "..." in the middle
  check("...->...", {{2, 3}});
  check("...i->...", {{2, 3}});
  check("...ij->ij", {{2, 3, 4}});                        // an explicit output without "..." sums it
  check("i...i->...", {{3, 2, 3}});                       // a diagonal around "..."
  check("...,...", {{2, 3}, {3}});                        // no letters at all
}

TEST_P(Einsum, SizeOneLettersBroadcast) {
  check("ij,ij->ij", {{1, 4}, {3, 4}});
  check("ij,jk->ik", {{3, 1}, {4, 5}});   // a summed letter of size 1 against 4
  check("bij,bjk->bik", {{1, 3, 4}, {2, 4, 5}});
  check("ij,jk->ijk", {{3, 1}, {4, 5}});
}

TEST_P(Einsum, ManyOperands) {
  check("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}});
  check("bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}});  // bilinear
  check("ij,jk,kl,lm->im", {{2, 3}, {3, 2}, {2, 4}, {4, 3}});
  check("i,j,k->ijk", {{2}, {3}, {2}});
  check("ab,bc,ca->", {{2, 3}, {3, 4}, {4, 2}});  // trace of a product
  check("ii,ij,j", {{3, 3}, {3, 4}, {4}});
}

TEST_P(Einsum, ZeroDimAndEmptyOperands) {
  check(",ij->ij", {{}, {2, 3}});
  check(",", {{}, {}});
  check("->", {{}});
  check("ij,jk->ik", {{2, 0}, {0, 3}});  // an empty sum: zeros
  check("ij,jk->ik", {{0, 2}, {2, 3}});
  check("ii->i", {{0, 0}});
}

TEST_P(Einsum, Dtypes) {
  Tensor a = wok::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = wok::from_vector(std::vector<int32_t>{1, -1, 2, 0, 3, 1}, {3, 2});
  EXPECT_TRUE(wt::exact<int32_t>("int32 ij,jk", wok::einsum("ij,jk->ik", {a, b}), {14, 2, 32, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("int32 ij->", wok::einsum("ij->", {a}), {21}));
  EXPECT_TRUE(wt::exact<int32_t>("int32 ii",
                                 wok::einsum("ii", {wok::from_vector(std::vector<int32_t>{2, 9, 9, 5}, {2, 2})}), {7}));
  Tensor m = wok::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
  EXPECT_TRUE(wt::exact<int32_t>("bool ij,jk", wok::einsum("ij,jk->ik", {m, m}), {1, 0, 2, 1}));
  // float32 with float64 promotes.
  Tensor f = wok::from_vector(std::vector<float>{1, 2}), d = wok::from_vector(std::vector<double>{3, 4});
  EXPECT_TRUE(wt::exact<double>("mixed i,i", wok::einsum("i,i", {f, d}), {11}));
}

INSTANTIATE_TEST_SUITE_P(Backends, Einsum, wt::kBothBackends, wt::backend_param_name);

// ---- under the JIT --------------------------------------------------------------------

class EinsumKernels : public wt::JitLaunchCounts {};

// A contraction is one GEMM, as the matmul it stands for, with transposed
// operands read in place (no copy kernel); dot products are one kernel.
TEST_F(EinsumKernels, ContractionsAreOneGemm) {
  Tensor a = wok::rand({4, 16, 24}, 1), b = wok::rand({4, 24, 8}, 2), bt = wok::rand({4, 8, 24}, 3);
  Tensor at = wok::rand({4, 24, 16}, 4);
  wok::eval({a, b, bt, at});
  EXPECT_EQ(launches_of({wok::matmul(a, b)}), 1);
  EXPECT_EQ(launches_of({wok::einsum("bij,bjk->bik", {a, b})}), 1);
  EXPECT_EQ(launches_of({wok::einsum("bij,bkj->bik", {a, bt})}), 1);
  EXPECT_EQ(launches_of({wok::einsum("bji,bjk->bik", {at, b})}), 1);
  EXPECT_EQ(launches_of({wok::einsum("bij,bij->bi", {a, a})}), 1);
  EXPECT_EQ(launches_of({wok::einsum("bij,bjk->bik", {a, b}) * 2.0f + 1.0f}), 1) << "an epilogue still fuses";
  // The values are matmul's.
  EXPECT_TRUE(wt::close<float>("einsum bkj", wok::einsum("bij,bkj->bik", {a, bt}),
                               wok::matmul(a, wok::transpose(bt, -2, -1)).to_vector<double>(), 0, 0));
}

// ---- on a GPU -------------------------------------------------------------------------------

TEST(EinsumOnCuda, MatchesTheCpu) {
  if (!wok::cuda_available()) GTEST_SKIP() << "no CUDA device: " << wok::cuda_unavailable_reason();
  const wok::Device gpu = wok::Device::cuda();
  Tensor a = wok::rand({2, 3, 4}, 1), b = wok::rand({2, 5, 4}, 2), c = wok::rand({4, 4}, 3),
         d = wok::rand({2, 4, 4}, 4);
  const std::vector<std::pair<const char*, std::vector<Tensor>>> cases = {
      {"bij,bkj->bik", {a, b}}, {"bij,bij->bi", {a, a}}, {"...ii->...i", {d}}, {"bij,jj,bkj->bik", {a, c, b}}};
  for (const auto& [eq, cpu] : cases) {
    SCOPED_TRACE(eq);
    std::vector<Tensor> dev;
    for (const Tensor& t : cpu) dev.push_back(t.to(gpu));
    Tensor y = wok::einsum(eq, dev);
    EXPECT_EQ(y.device(), gpu);
    EXPECT_TRUE(wt::close<float>(eq, y, wok::einsum(eq, cpu).to_vector<double>(), 0, 1e-5));
  }
}

// ---- errors ---------------------------------------------------------------------------------

using wt::throws_naming;

TEST(EinsumErrors, NameTheEquationAndTheShapes) {
  Tensor a = wok::zeros({2, 3}), b = wok::zeros({4, 5});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::einsum("ij,jk->ik", {a, b}); },
                                             {"wok::einsum", "'j' has size 3 in operand 0 and 4 in operand 1",
                                              "\"ij,jk->ik\"", "float32[2, 3], float32[4, 5]"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("ij,jk->ik", {a}); },
                                                {"2 input terms for 1 operands", "\"ij,jk->ik\""}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::einsum("ijk", {a}); }, {"operand 0 has 2 dims", "names 3"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::einsum("i...jk", {a}); }, {"operand 0 has 2 dims", "\"...\""}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::einsum("ii", {a}); },
                                             {"'i' is repeated in operand 0", "2 and 3", "diagonal"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("ij->ii", {a}); }, {"'i' appears twice"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("ij->k", {a}); }, {"'k'", "names no dim"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("i2", {a}); }, {"'2'", "\"i2\""}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("i..j", {a}); }, {"\"...\""}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("...i...", {a}); }, {"more than one \"...\""}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("ij->i->j", {a}); }, {"more than one \"->\""}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("ij->i,j", {a}); }, {"output", "','"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::einsum("", {}); }, {"at least one operand"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(
      [&] {
        wok::einsum("...i,...i", {wok::zeros({2, 3}), wok::zeros({4, 3})});
      },
      {"dim 0 of \"...\" has size 2 in operand 0 and 4 in operand 1"}));
  EXPECT_TRUE(throws_naming<wok::Error>([&] { wok::einsum("ij", {Tensor()}); }, {"undefined", "\"ij\""}));
}

}  // namespace
