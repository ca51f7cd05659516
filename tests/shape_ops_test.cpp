// Movement ops, matmul and the nn functions, as a user sees them: shapes,
// Python slice semantics, errors that name the op and the shapes, and
// values against float64 / long double references.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;
using LD = long double;

std::vector<float> iota_f(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

// Expects `fn` to throw E with every piece of `needles` in its message.
template <typename E, typename Fn>
void expect_error(Fn fn, std::vector<std::string> needles, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": did not throw";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const std::string& n : needles)
      EXPECT_TRUE(msg.find(n) != std::string::npos) << what << ": \"" << n << "\" not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw the wrong type: " << e.what();
  }
}

// ---- reshape ------------------------------------------------------------------------------

TEST(Reshape, InfersOneMinusOne) {
  Tensor x = wok::from_vector(iota_f(24), {2, 3, 4});
  EXPECT_EQ(x.reshape({-1, 4}).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.reshape({4, -1}).shape(), (Shape{4, 6}));
  EXPECT_EQ(x.reshape({-1}).shape(), (Shape{24}));
  EXPECT_EQ(x.reshape({2, -1, 3}).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(x.reshape({1, 1, -1, 1}).shape(), (Shape{1, 1, 24, 1}));
  EXPECT_EQ(wok::scalar_tensor(5.0f).reshape({-1}).shape(), (Shape{1}));
  EXPECT_EQ(wok::from_vector(std::vector<float>{7}, {1}).reshape({}).shape(), Shape{});
  EXPECT_EQ(wok::zeros({0, 3}).reshape({-1, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(wok::zeros({0, 3}).reshape({3, 0, 5}).shape(), (Shape{3, 0, 5}));
  // Same elements in the same order.
  EXPECT_TRUE(wt::exact<float>("reshape", x.reshape({4, -1}), iota_f(24)));
  EXPECT_TRUE(wt::exact<float>("reshape", (x * 2.0f).reshape({-1}), [] {
    std::vector<float> v = iota_f(24);
    for (float& f : v) f *= 2;
    return v;
  }()));
}

TEST(Reshape, Errors) {
  Tensor x = wok::zeros({2, 3, 4});
  expect_error<wok::ShapeError>([&] { x.reshape({-1, -1}); }, {"wok::reshape", "-1", "[2, 3, 4]"}, "two -1s");
  expect_error<wok::ShapeError>([&] { x.reshape({5, 5}); }, {"wok::reshape", "[5, 5]", "[2, 3, 4]"}, "wrong count");
  expect_error<wok::ShapeError>([&] { x.reshape({5, -1}); }, {"wok::reshape", "[5, -1]"}, "-1 does not divide");
  expect_error<wok::ShapeError>([&] { x.reshape({-2, -12}); }, {"wok::reshape"}, "negative dims");
  expect_error<wok::ShapeError>([&] { wok::zeros({0, 3}).reshape({-1, 0}); }, {"wok::reshape"}, "-1 with a 0 dim");
}

// ---- permute / transpose ---------------------------------------------------------------------

TEST(Permute, ShapesAndValues) {
  Tensor x = wok::from_vector(iota_f(24), {2, 3, 4});
  EXPECT_EQ(x.permute({2, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(x.permute({-1, 0, -2}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(x.transpose().shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(x.transpose(0, -1).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(x.transpose(1, 2).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(wok::scalar_tensor(1.0f).transpose().shape(), Shape{});
  EXPECT_EQ(wok::zeros({0, 5}).transpose().shape(), (Shape{5, 0}));

  std::vector<float> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(static_cast<float>(i * 12 + j * 4 + k));
  EXPECT_TRUE(wt::exact<float>("permute", x.permute({2, 0, 1}), want));
  Tensor m = wok::from_vector(iota_f(6), {2, 3});
  EXPECT_TRUE(wt::exact<float>("transpose", m.transpose(), {0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(wt::exact<float>("transpose", m.transpose().transpose(), iota_f(6)));
}

TEST(Permute, Errors) {
  Tensor x = wok::zeros({2, 3, 4});
  expect_error<wok::ShapeError>([&] { x.permute({0, 0, 1}); }, {"wok::permute"}, "repeated dim");
  expect_error<wok::ShapeError>([&] { x.permute({0, 1}); }, {"wok::permute", "[2, 3, 4]"}, "too few dims");
  expect_error<wok::ShapeError>([&] { x.permute({0, 1, 3}); }, {"wok::permute"}, "dim out of range");
  expect_error<wok::ShapeError>([&] { x.transpose(0, 3); }, {"wok::transpose", "3"}, "transpose axis out of range");
}

TEST(BroadcastTo, ShapesValuesErrors) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3}, {3});
  EXPECT_TRUE(wt::exact<float>("broadcast_to", x.broadcast_to({2, 3}), {1, 2, 3, 1, 2, 3}));
  EXPECT_TRUE(wt::exact<float>("broadcast_to", x.reshape({3, 1}).broadcast_to({3, 2}), {1, 1, 2, 2, 3, 3}));
  expect_error<wok::ShapeError>([&] { x.broadcast_to({2, 4}); }, {"wok::broadcast_to", "[3]", "[2, 4]"}, "bad target");
  expect_error<wok::ShapeError>([&] { wok::zeros({2, 3}).broadcast_to({3}); }, {"wok::broadcast_to"}, "lower rank");
}

// ---- slice ------------------------------------------------------------------------------------

// Python's slice.indices() followed by range(), written independently.
std::vector<int64_t> python_slice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  auto adjust = [&](std::optional<int64_t> v, int64_t def_pos, int64_t def_neg) -> int64_t {
    if (!v) return step > 0 ? def_pos : def_neg;
    int64_t i = *v;
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  int64_t b = adjust(start, 0, n - 1), e = adjust(stop, n, -1);
  std::vector<int64_t> out;
  if (step > 0)
    for (int64_t i = b; i < e; i += step) out.push_back(i);
  else
    for (int64_t i = b; i > e; i += step) out.push_back(i);
  return out;
}

TEST(Slice, PythonSemanticsSweep) {
  const int64_t n = 10;
  Tensor x = wok::from_vector(iota_f(n), {n});
  const std::optional<int64_t> bounds[] = {std::nullopt, -12, -10, -9, -3, -1, 0, 1, 3, 9, 10, 12};
  int bad = 0;
  for (int64_t step : {-3, -2, -1, 1, 2, 3})
    for (auto start : bounds)
      for (auto stop : bounds) {
        std::vector<int64_t> idx = python_slice(n, start, stop, step);
        std::string what = "x[" + (start ? std::to_string(*start) : "") + ":" + (stop ? std::to_string(*stop) : "") +
                           ":" + std::to_string(step) + "]";
        Tensor y = wok::slice(x, 0, start, stop, step);
        if (y.shape() != Shape{static_cast<int64_t>(idx.size())}) {
          if (++bad < 10)
            ADD_FAILURE() << what << " has shape " << wok::shape_str(y.shape()) << ", want [" << idx.size() << "]";
          continue;
        }
        std::vector<float> want(idx.begin(), idx.end());
        auto r = wt::exact<float>(what, y, want);
        if (!r && ++bad < 10) ADD_FAILURE() << r.message();
      }
  EXPECT_EQ(bad, 0);
}

TEST(Slice, MultiDimAndErrors) {
  Tensor x = wok::from_vector(iota_f(12), {3, 4});
  Tensor cols = wok::slice(x, -1, 1, std::nullopt, 2);
  EXPECT_EQ(cols.shape(), (Shape{3, 2}));
  EXPECT_TRUE(wt::exact<float>("slice", cols, {1, 3, 5, 7, 9, 11}));
  Tensor rows = wok::slice(x, 0, std::nullopt, std::nullopt, -1);
  EXPECT_TRUE(wt::exact<float>("slice", rows, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}));
  EXPECT_EQ(wok::slice(x, 1, 3, 1).shape(), (Shape{3, 0}));
  // Slices compose with elementwise ops.
  EXPECT_TRUE(wt::exact<float>("add", wok::slice(x, 0, 0, 1) + wok::slice(x, 0, 2, 3), {8, 10, 12, 14}));
  expect_error<wok::ShapeError>([&] { wok::slice(x, 0, 0, 2, 0); }, {"wok::slice", "step"}, "step 0");
  expect_error<wok::ShapeError>([&] { wok::slice(x, 2, 0, 1); }, {"wok::slice", "axis", "[3, 4]"}, "axis 2");
  expect_error<wok::ShapeError>([&] { wok::slice(x, -3, 0, 1); }, {"wok::slice"}, "axis -3");
}

// ---- concat -----------------------------------------------------------------------------------

TEST(Concat, ValuesPromotionAndErrors) {
  Tensor a = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor b = wok::from_vector(std::vector<float>{5, 6}, {1, 2});
  Tensor c = wok::concat({a, b});
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_TRUE(wt::exact<float>("concat", c, {1, 2, 3, 4, 5, 6}));
  Tensor d = wok::concat({a, wok::from_vector(std::vector<float>{9, 8}, {2, 1})}, -1);
  EXPECT_EQ(d.shape(), (Shape{2, 3}));
  EXPECT_TRUE(wt::exact<float>("concat", d, {1, 2, 9, 3, 4, 8}));
  // Empty pieces and a single piece.
  EXPECT_TRUE(wt::exact<float>("concat", wok::concat({wok::zeros({0, 2}), b, wok::zeros({0, 2})}), {5, 6}));
  EXPECT_EQ(wok::concat({a}).shape(), a.shape());

  // Promotion: int32 with float32 gives float64; bool with int64 gives int64.
  Tensor i = wok::from_vector(std::vector<int32_t>{16777217}, {1});
  Tensor f = wok::from_vector(std::vector<float>{0.5f}, {1});
  EXPECT_TRUE(wt::exact<double>("concat", wok::concat({i, f}), {16777217.0, 0.5}));
  EXPECT_TRUE(wt::exact<int64_t>(
      "concat", wok::concat({wok::from_vector(std::vector<bool>{true}), wok::from_vector(std::vector<int64_t>{-4})}),
      {1, -4}));

  expect_error<wok::ShapeError>(
      [&] {
        wok::concat({a, wok::zeros({2, 3})});
      },
      {"wok::concat", "[2, 2]", "[2, 3]"}, "mismatch outside the axis");
  expect_error<wok::ShapeError>([&] { wok::concat({a, wok::zeros({4})}); }, {"wok::concat", "[4]"}, "rank mismatch");
  expect_error<wok::ShapeError>([&] { wok::concat({a, b}, 2); }, {"wok::concat"}, "axis out of range");
  expect_error<wok::ShapeError>([&] { wok::concat({}); }, {"wok::concat"}, "no tensors");
  expect_error<wok::ShapeError>(
      [&] {
        wok::concat({wok::scalar_tensor(1.0f), wok::scalar_tensor(2.0f)});
      },
      {"wok::concat"}, "0-d tensors");
}

// ---- matmul -----------------------------------------------------------------------------------

std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, int64_t batch, int64_t m,
                               int64_t k, int64_t n, bool a_batched, bool b_batched) {
  std::vector<double> out(static_cast<size_t>(batch * m * n));
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        LD s = 0;
        for (int64_t q = 0; q < k; ++q)
          s += static_cast<LD>(a[(a_batched ? p * m * k : 0) + i * k + q]) * b[(b_batched ? p * k * n : 0) + q * n + j];
        out[p * m * n + i * n + j] = static_cast<double>(s);
      }
  return out;
}

TEST(Matmul, ShapesAndValues) {
  std::vector<double> a = wt::random_values<double>(2 * 3 * 5, -1, 1, 1),
                      b = wt::random_values<double>(5 * 4, -1, 1, 2);
  Tensor ta = wok::from_vector(a, {2, 3, 5}), tb = wok::from_vector(b, {5, 4});
  Tensor y = wok::matmul(ta, tb);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(wt::close<double>("matmul", y, matmul_ref(a, b, 2, 3, 5, 4, true, false), 1e-13, 1e-14));

  // 1-D operands: vector @ matrix, matrix @ vector, vector @ vector.
  std::vector<double> v = {1, 2, 3, 4, 5};
  EXPECT_EQ(wok::matmul(wok::from_vector(v), tb).shape(), (Shape{4}));
  EXPECT_EQ(wok::matmul(ta, wok::from_vector(v)).shape(), (Shape{2, 3}));
  Tensor dot = wok::matmul(wok::from_vector(v), wok::from_vector(v));
  EXPECT_EQ(dot.shape(), Shape{});
  EXPECT_DOUBLE_EQ(dot.item<double>(), 55.0);
  EXPECT_TRUE(wt::close<double>("matmul", wok::matmul(wok::from_vector(v), tb),
                                matmul_ref(v, b, 1, 1, 5, 4, false, false), 1e-13, 1e-14));
  // Broadcast batch dims: [3, 1, 2, 2] @ [4, 2, 2] -> [3, 4, 2, 2].
  EXPECT_EQ(wok::matmul(wok::zeros({3, 1, 2, 2}), wok::zeros({4, 2, 2})).shape(), (Shape{3, 4, 2, 2}));
  // Integers are exact; bool computes as int32; int32 with float32 gives float64.
  Tensor ia = wok::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(wt::exact<int32_t>("matmul", wok::matmul(ia, ia), {7, 10, 15, 22}));
  EXPECT_EQ(wok::matmul(wok::ones({2, 2}, DType::kBool), wok::ones({2, 2}, DType::kBool)).dtype(), DType::kInt32);
  EXPECT_EQ(wok::matmul(ia, wok::ones({2, 2})).dtype(), DType::kFloat64);
  // An empty inner dim gives zeros.
  EXPECT_TRUE(wt::exact<float>("matmul", wok::matmul(wok::zeros({2, 0}), wok::zeros({0, 2})), {0, 0, 0, 0}));
}

TEST(Matmul, ShapeErrorsNameTheShapes) {
  expect_error<wok::ShapeError>(
      [] {
        wok::matmul(wok::zeros({2, 3}), wok::zeros({4, 5}));
      },
      {"wok::matmul", "[2, 3]", "[4, 5]"}, "inner dims");
  expect_error<wok::ShapeError>(
      [] {
        wok::matmul(wok::zeros({2, 2, 3}), wok::zeros({3, 3, 4}));
      },
      {"wok::matmul", "[2, 2, 3]", "[3, 3, 4]"}, "batch dims");
  expect_error<wok::ShapeError>([] { wok::matmul(wok::scalar_tensor(1.0f), wok::zeros({2})); },
                                {"wok::matmul", "[]", "[2]"}, "0-d operand");
  // 1-D operands: the message names the shapes the user passed.
  expect_error<wok::ShapeError>([] { wok::matmul(wok::zeros({3}), wok::zeros({4})); }, {"wok::matmul", "[3]", "[4]"},
                                "vector @ vector");
  expect_error<wok::ShapeError>(
      [] {
        wok::matmul(wok::zeros({2, 3}), wok::zeros({4}));
      },
      {"wok::matmul", "[2, 3]", "[4]"}, "matrix @ vector");
}

// ---- nn functions ----------------------------------------------------------------------------

// Rows of these lengths, float64 / long double references.
const int64_t kRowLengths[] = {1, 2, 7, 31, 64, 257, 1000};

std::vector<LD> softmax_ref(const std::vector<double>& x, int64_t rows, int64_t n, bool log_form) {
  std::vector<LD> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    LD mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max<LD>(mx, x[r * n + i]);
    LD s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<LD>(x[r * n + i]) - mx);
    for (int64_t i = 0; i < n; ++i) {
      LD v = static_cast<LD>(x[r * n + i]) - mx;
      out[r * n + i] = log_form ? v - std::log(s) : std::exp(v) / s;
    }
  }
  return out;
}

template <typename T>
void check_softmax(double scale, double rtol, double atol) {
  for (int64_t n : kRowLengths) {
    const int64_t rows = 3;
    std::vector<double> xd = wt::random_values<double>(rows * n, -scale, scale, static_cast<uint32_t>(n));
    std::vector<T> x(xd.begin(), xd.end());
    xd.assign(x.begin(), x.end());  // the reference sees the rounded inputs
    Tensor t = wok::from_vector(x, {rows, n});
    std::string tag =
        wt::dname(wok::dtype_of<T>()) + " rows of " + std::to_string(n) + " scale " + std::to_string(scale);
    std::vector<LD> sm = softmax_ref(xd, rows, n, false), lsm = softmax_ref(xd, rows, n, true);
    Tensor y = wok::softmax(t);
    Tensor ly = wok::log_softmax(t);
    ASSERT_EQ(y.dtype(), wok::dtype_of<T>());
    EXPECT_TRUE(wt::close<T>("softmax " + tag, y, std::vector<double>(sm.begin(), sm.end()), rtol, atol));
    EXPECT_TRUE(wt::close<T>("log_softmax " + tag, ly, std::vector<double>(lsm.begin(), lsm.end()), rtol, atol * 10));
    std::vector<T> yv = y.template to_vector<T>();
    for (int64_t r = 0; r < rows; ++r) {
      LD s = 0;
      for (int64_t i = 0; i < n; ++i) s += yv[r * n + i];
      EXPECT_NEAR(static_cast<double>(s), 1.0, 8 * n * std::numeric_limits<T>::epsilon()) << "row sum, " << tag;
    }
  }
}

TEST(NN, SoftmaxAndLogSoftmax) {
  check_softmax<float>(5, 1e-5, 1e-7);
  check_softmax<double>(5, 1e-14, 1e-16);
  // Large magnitudes stay finite (the max is subtracted first).
  check_softmax<float>(1000, 1e-5, 1e-7);
  check_softmax<double>(1000, 1e-13, 1e-16);
}

TEST(NN, SoftmaxSpecialRowsAndAxes) {
  Tensor x = wok::from_vector(std::vector<float>{1000, 1000, -1000, 0, -INFINITY, 0}, {2, 3});
  EXPECT_TRUE(wt::close<float>("softmax", wok::softmax(x), {0.5, 0.5, 0, 0.5, 0, 0.5}, 1e-6, 1e-30));
  EXPECT_TRUE(wt::close<float>(
      "log_softmax", wok::log_softmax(x),
      {-std::log(2.0), -std::log(2.0), -2000 - std::log(2.0), -std::log(2.0), -INFINITY, -std::log(2.0)}, 1e-6, 1e-6));
  // Along axis 0 of a [2, 3] tensor: each column sums to 1.
  Tensor c = wok::from_vector(std::vector<double>{0, 1, 2, 3, 4, 5}, {2, 3});
  double e3 = 1 / (1 + std::exp(3.0));
  EXPECT_TRUE(
      wt::close<double>("softmax axis 0", wok::softmax(c, 0), {e3, e3, e3, 1 - e3, 1 - e3, 1 - e3}, 1e-14, 1e-16));
  // Integer input gives float64.
  EXPECT_EQ(wok::softmax(wok::from_vector(std::vector<int32_t>{1, 2})).dtype(), DType::kFloat64);
  EXPECT_THROW(wok::softmax(c, 2), wok::ShapeError);
}

template <typename T>
void check_norms(double rtol, double atol) {
  for (int64_t n : kRowLengths) {
    const int64_t rows = 4;
    std::vector<double> xd = wt::random_values<double>(rows * n, -3, 5, static_cast<uint32_t>(100 + n));
    std::vector<double> wd = wt::random_values<double>(n, 0.5, 1.5, 7), bd = wt::random_values<double>(n, -1, 1, 8);
    std::vector<T> x(xd.begin(), xd.end()), w(wd.begin(), wd.end()), b(bd.begin(), bd.end());
    xd.assign(x.begin(), x.end());
    wd.assign(w.begin(), w.end());
    bd.assign(b.begin(), b.end());
    Tensor tx = wok::from_vector(x, {rows, n}), tw = wok::from_vector(w), tb = wok::from_vector(b);
    const double eps_ln = 1e-5, eps_rms = 1e-6;
    std::vector<double> ln, ln_wb, rms, rms_w;
    for (int64_t r = 0; r < rows; ++r) {
      LD mean = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i) {
        mean += xd[r * n + i];
        sq += static_cast<LD>(xd[r * n + i]) * xd[r * n + i];
      }
      mean /= n;
      LD var = 0;
      for (int64_t i = 0; i < n; ++i) var += (xd[r * n + i] - mean) * (xd[r * n + i] - mean);
      var /= n;
      LD inv = 1 / std::sqrt(var + eps_ln), inv_rms = 1 / std::sqrt(sq / n + eps_rms);
      for (int64_t i = 0; i < n; ++i) {
        LD y = (xd[r * n + i] - mean) * inv;
        ln.push_back(static_cast<double>(y));
        ln_wb.push_back(static_cast<double>(y * wd[i] + bd[i]));
        rms.push_back(static_cast<double>(xd[r * n + i] * inv_rms));
        rms_w.push_back(static_cast<double>(xd[r * n + i] * inv_rms * wd[i]));
      }
    }
    std::string tag = wt::dname(wok::dtype_of<T>()) + " rows of " + std::to_string(n);
    EXPECT_TRUE(wt::close<T>("layer_norm " + tag, wok::layer_norm(tx), ln, rtol, atol));
    EXPECT_TRUE(wt::close<T>("layer_norm(w, b) " + tag, wok::layer_norm(tx, tw, tb), ln_wb, rtol, atol));
    EXPECT_TRUE(wt::close<T>("rms_norm " + tag, wok::rms_norm(tx), rms, rtol, atol));
    EXPECT_TRUE(wt::close<T>("rms_norm(w) " + tag, wok::rms_norm(tx, tw), rms_w, rtol, atol));
  }
}

TEST(NN, LayerNormAndRmsNorm) {
  check_norms<float>(1e-5, 1e-5);
  check_norms<double>(1e-12, 1e-12);
  // A constant row normalizes to 0 (variance 0 is covered by eps).
  Tensor c = wok::full({2, 8}, 3.0f);
  EXPECT_TRUE(wt::close<float>("layer_norm", wok::layer_norm(c), std::vector<double>(16, 0.0), 0, 1e-6));
  // A large offset does not destroy the result (centered before squaring).
  std::vector<double> big = {1e4 + 1, 1e4 - 1, 1e4 + 1, 1e4 - 1};
  EXPECT_TRUE(wt::close<float>("layer_norm offset",
                               wok::layer_norm(wok::from_vector(std::vector<float>(big.begin(), big.end()))),
                               {1, -1, 1, -1}, 1e-4, 1e-4));
  EXPECT_THROW(wok::layer_norm(wok::zeros({2, 3}), wok::ones({4})), wok::ShapeError);
}

}  // namespace
