// nll_loss and cross_entropy against a float64 computation, and the
// window functions against their formulas.
#include <gtest/gtest.h>
#include <cmath>
#include <numbers>
#include "test_util.h"
#include "wok/wok.h"

namespace {

class Losses : public wt::BothBackends {};

// The float64 loss of log-probabilities lp [N, C, D] (row-major), per
// position, with its weight.
struct RefLoss {
  std::vector<double> loss, weight;
};

RefLoss reference_nll(const std::vector<double>& lp, const std::vector<int64_t>& target, int64_t n, int64_t c,
                      int64_t d, const std::vector<double>* class_weight, std::optional<int64_t> ignore) {
  RefLoss r;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const int64_t t = target[i * d + k];
      const bool skip = (ignore && t == *ignore) || t < 0 || t >= c;
      const double w = skip ? 0 : class_weight ? (*class_weight)[t] : 1;
      r.weight.push_back(w);
      r.loss.push_back(skip ? 0 : -lp[(i * c + t) * d + k] * w);
    }
  return r;
}

TEST_P(Losses, NllLossMatchesFloat64WithWeightsIgnoreIndexAndEachReduction) {
  const int64_t n = 3, c = 4, d = 2;
  std::vector<float> lp(n * c * d);
  for (size_t i = 0; i < lp.size(); ++i) lp[i] = -0.1f * static_cast<float>(i % 7) - 0.05f;
  const std::vector<int64_t> target = {0, 3, 2, 1, 3, 2};  // [N, D]
  const std::vector<float> weight = {0.5f, 1.0f, 2.0f, 0.25f};
  const std::vector<double> lp64(lp.begin(), lp.end()), w64(weight.begin(), weight.end());
  const wok::Tensor x = wt::tensor(lp, {n, c, d}), t = wt::tensor(target, {n, d}), w = wt::tensor(weight);
  const RefLoss ref = reference_nll(lp64, target, n, c, d, &w64, 2);
  const std::vector<float> none = wok::nll_loss(x, t, w, wok::LossReduction::kNone, 2).to_vector<float>();
  double sum = 0, wsum = 0;
  for (size_t i = 0; i < ref.loss.size(); ++i) {
    EXPECT_NEAR(none[i], ref.loss[i], 1e-6) << i;
    sum += ref.loss[i];
    wsum += ref.weight[i];
  }
  EXPECT_NEAR(wok::nll_loss(x, t, w, wok::LossReduction::kSum, 2).item<float>(), sum, 1e-5);
  EXPECT_NEAR(wok::nll_loss(x, t, w, wok::LossReduction::kMean, 2).item<float>(), sum / wsum, 1e-5);
  // Without weights or ignore_index, the mean is over every position.
  const RefLoss plain = reference_nll(lp64, target, n, c, d, nullptr, std::nullopt);
  double plain_sum = 0;
  for (double v : plain.loss) plain_sum += v;
  EXPECT_NEAR(wok::nll_loss(x, t).item<float>(), plain_sum / (n * d), 1e-5);
}

TEST_P(Losses, CrossEntropyIsNllOfLogSoftmax) {
  const std::vector<double> scores = {1.0, 2.0, 0.5, -1.0, 3.0, 0.0};  // [2, 3]
  const std::vector<int64_t> target = {1, 0};
  const wok::Tensor x = wt::tensor(scores, {2, 3});
  double expected = 0;
  for (int i = 0; i < 2; ++i) {
    double z = 0;
    for (int k = 0; k < 3; ++k) z += std::exp(scores[i * 3 + k]);
    expected += -(scores[i * 3 + target[i]] - std::log(z));
  }
  EXPECT_NEAR(wok::cross_entropy(x, wt::tensor(target)).item<double>(), expected / 2, 1e-12);
}

TEST_P(Losses, BadShapesAndDTypesNameTheOp) {
  const wok::Tensor x = wok::zeros({2, 3});
  EXPECT_THROW(wok::nll_loss(x, wok::zeros({3}, wok::DType::kInt64)), wok::ShapeError);
  EXPECT_THROW(wok::nll_loss(x, wok::zeros({2}, wok::DType::kFloat32)), wok::DTypeError);
  EXPECT_THROW(wok::nll_loss(x, wok::zeros({2}, wok::DType::kInt64), wok::ones({2})), wok::ShapeError);
  try {
    wok::nll_loss(wok::zeros({2}), wok::zeros({2}, wok::DType::kInt64));
    FAIL();
  } catch (const wok::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("nll_loss"), std::string::npos);
  }
}

TEST_P(Losses, WindowsFollowTheirFormulas) {
  const double pi = std::numbers::pi;
  for (bool periodic : {true, false}) {
    const int64_t n = 10;
    const double denom = periodic ? n : n - 1;
    const auto hann = wok::hann_window(n, periodic, wok::DType::kFloat64).to_vector<double>();
    const auto hamming = wok::hamming_window(n, periodic, wok::DType::kFloat64).to_vector<double>();
    const auto blackman = wok::blackman_window(n, periodic, wok::DType::kFloat64).to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double p = 2 * pi * static_cast<double>(i) / denom;
      EXPECT_NEAR(hann[i], 0.5 - 0.5 * std::cos(p), 1e-12);
      EXPECT_NEAR(hamming[i], 0.54 - 0.46 * std::cos(p), 1e-12);
      EXPECT_NEAR(blackman[i], 0.42 - 0.5 * std::cos(p) + 0.08 * std::cos(2 * p), 1e-12);
    }
  }
  EXPECT_EQ(wok::hann_window(1).to_vector<float>(), std::vector<float>{1.0f});
  EXPECT_EQ(wok::hann_window(0).numel(), 0);
  EXPECT_THROW(wok::hann_window(-1), wok::ArgumentError);
}

INSTANTIATE_TEST_SUITE_P(Backends, Losses, wt::kBothBackends, wt::backend_param_name);

}  // namespace
