// One data-parallel gradient step of a small MLP, checked against one process.
//
//   y = tanh(x W1 + b1) W2 + b2          x [64, 64], W1 [64, 128], W2 [128, 10]
//   loss = mean over the batch of 0.5 * |y - t|^2
//
// Every rank builds the same seeded weights and the same batch of 64 rows,
// takes its own slice of the rows, and computes the loss and the gradients
// of its slice (forward and backward written out with wok ops). The
// gradients are averaged over the ranks with wok::dist::all_reduce(kMean):
// with equal slices that is exactly the gradient of the whole batch. Each
// rank then applies the same SGD step, and checks it against the whole
// batch computed in this one process.
//
// Run:  build/examples/data_parallel                       (a group of one)
//       mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/data_parallel
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <wok/wok.h>

namespace {

constexpr int64_t kBatch = 64, kIn = 64, kHidden = 128, kOut = 10;
constexpr float kLearningRate = 0.1f;
constexpr float kTolerance = 1e-4f;

struct Params {
  wok::Tensor w1, b1, w2, b2;
};

// The loss of a batch and its gradient with respect to each parameter.
struct Step {
  wok::Tensor loss, w1, b1, w2, b2;
};

Step loss_and_grads(const Params& p, const wok::Tensor& x, const wok::Tensor& t) {
  const float rows = static_cast<float>(x.size(0));
  // Forward.
  wok::Tensor h = wok::tanh(wok::matmul(x, p.w1) + p.b1);  // [rows, 128]
  wok::Tensor y = wok::matmul(h, p.w2) + p.b2;             // [rows, 10]
  wok::Tensor err = y - t;
  Step s;
  s.loss = wok::sum(err * err) * (0.5f / rows);
  // Backward, by hand: dloss/dy, then through each layer in turn.
  wok::Tensor dy = err / rows;                              // [rows, 10]
  s.w2 = wok::matmul(h.transpose(), dy);                    // [128, 10]
  s.b2 = wok::sum(dy, {0});                                 // [10]
  wok::Tensor dh = wok::matmul(dy, p.w2.transpose());       // [rows, 128]
  wok::Tensor dz = dh * (1.0f - h * h);                     // tanh' = 1 - tanh^2
  s.w1 = wok::matmul(x.transpose(), dz);                    // [64, 128]
  s.b1 = wok::sum(dz, {0});                                 // [128]
  return s;
}

Params sgd(const Params& p, const Step& g) {
  return {p.w1 - kLearningRate * g.w1, p.b1 - kLearningRate * g.b1, p.w2 - kLearningRate * g.w2,
          p.b2 - kLearningRate * g.b2};
}

float max_abs_diff(const wok::Tensor& a, const wok::Tensor& b) { return wok::max(wok::abs(a - b)).item<float>(); }

}  // namespace

int main() {
  wok::dist::init();  // under mpirun: every process of the job; else a group of one
  const int rank = wok::dist::rank(), size = wok::dist::size();
  if (kBatch % size != 0) {
    if (rank == 0) std::fprintf(stderr, "data_parallel: the batch of %lld rows does not split over %d ranks\n",
                                static_cast<long long>(kBatch), size);
    return 2;
  }

  // The same seeds on every rank: the same weights and the same whole batch.
  Params p{wok::randn({kIn, kHidden}, 1) * 0.1f, wok::zeros({kHidden}), wok::randn({kHidden, kOut}, 2) * 0.1f,
           wok::zeros({kOut})};
  wok::Tensor x = wok::randn({kBatch, kIn}, 3);
  wok::Tensor t = wok::randn({kBatch, kOut}, 4);

  // This rank's rows, its local gradients, and their mean over the ranks.
  const int64_t rows = kBatch / size;
  wok::Tensor my_x = wok::slice(x, 0, rank * rows, (rank + 1) * rows);
  wok::Tensor my_t = wok::slice(t, 0, rank * rows, (rank + 1) * rows);
  Step local = loss_and_grads(p, my_x, my_t);
  using wok::dist::ReduceOp;
  Step avg{wok::dist::all_reduce(local.loss, ReduceOp::kMean), wok::dist::all_reduce(local.w1, ReduceOp::kMean),
           wok::dist::all_reduce(local.b1, ReduceOp::kMean), wok::dist::all_reduce(local.w2, ReduceOp::kMean),
           wok::dist::all_reduce(local.b2, ReduceOp::kMean)};
  Params next = sgd(p, avg);
  // One evaluation runs the step: the backward matmuls, the five
  // all_reduces (issued in the same order on every rank) and the update.
  wok::eval({avg.loss, next.w1, next.b1, next.w2, next.b2});

  // The reference: this process alone, the whole batch, no communication.
  Step whole = loss_and_grads(p, x, t);
  Params ref = sgd(p, whole);
  const std::vector<std::pair<std::string, float>> diffs = {
      {"loss", max_abs_diff(avg.loss, whole.loss)}, {"dW1", max_abs_diff(avg.w1, whole.w1)},
      {"db1", max_abs_diff(avg.b1, whole.b1)},      {"dW2", max_abs_diff(avg.w2, whole.w2)},
      {"db2", max_abs_diff(avg.b2, whole.b2)},      {"W1 after the step", max_abs_diff(next.w1, ref.w1)},
      {"W2 after the step", max_abs_diff(next.w2, ref.w2)}};
  float mine = 0;
  for (const auto& d : diffs) mine = std::max(mine, d.second);
  // The worst difference on any rank, so that every rank agrees on the verdict.
  const float worst = wok::dist::all_reduce(wok::full({}, mine), ReduceOp::kMax).item<float>();

  if (rank == 0) {
    std::printf("data-parallel gradient step: MLP %lld -> %lld (tanh) -> %lld, mean-squared-error loss\n",
                static_cast<long long>(kIn), static_cast<long long>(kHidden), static_cast<long long>(kOut));
    std::printf("batch of %lld rows over %d rank%s: %lld rows each; gradients averaged with all_reduce(mean)\n",
                static_cast<long long>(kBatch), size, size == 1 ? "" : "s", static_cast<long long>(rows));
    std::printf("loss %.6f (mean over ranks)  vs  %.6f (whole batch, one process)\n", avg.loss.item<float>(),
                whole.loss.item<float>());
    std::printf("max abs difference from the one-process step (rank 0):\n");
    for (const auto& d : diffs) std::printf("  %-18s %.3g\n", d.first.c_str(), d.second);
    std::printf("worst over all ranks: %.3g (tolerance %g): %s\n", worst, kTolerance,
                worst <= kTolerance ? "ok" : "FAILED");
  }
  wok::dist::finalize();
  return worst <= kTolerance ? 0 : 1;
}
