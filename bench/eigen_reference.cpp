// The Eigen Tensor reference of eigen_reference.h. Compiled twice (see
// bench/CMakeLists.txt), with EIGEN_REFERENCE_avx2 or EIGEN_REFERENCE_native
// defined: the copy defines eigen_reference_avx2 or eigen_reference_native.
// The macro `Eigen` renames Eigen's namespace per copy: both builds
// instantiate the same templates with different code, and merging at link
// time would otherwise run one build's code in the other's place.
#if defined(EIGEN_REFERENCE_avx2)
#define EIGEN_REFERENCE_NAME eigen_reference_avx2
#define Eigen WokBenchEigenAvx2
#define EIGEN_REFERENCE_BUILD "AVX2 (-O3 -mavx2 -mfma -mf16c)"
#elif defined(EIGEN_REFERENCE_native)
#define EIGEN_REFERENCE_NAME eigen_reference_native
#define Eigen WokBenchEigenNative
#define EIGEN_REFERENCE_BUILD "native (-O3 -march=native)"
#else
#error "build with -DEIGEN_REFERENCE_avx2=1 or -DEIGEN_REFERENCE_native=1"
#endif
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <map>
#include <memory>
#include <mutex>

#include "eigen_reference.h"

namespace {

using Eigen::Index;
using Vec = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor, Index>>;
using ConstVec = Eigen::TensorMap<const Eigen::Tensor<float, 1, Eigen::RowMajor, Index>>;
using Mat = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor, Index>>;
using ConstMat = Eigen::TensorMap<const Eigen::Tensor<float, 2, Eigen::RowMajor, Index>>;

// A pool and its device per thread count, made on first use and kept.
struct Pool {
  explicit Pool(int threads) : pool(threads), device(&pool, threads) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};
const Eigen::ThreadPoolDevice& pool_device(int threads) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Pool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Pool>& p = pools[threads];
  if (!p) p = std::make_unique<Pool>(threads);
  return p->device;
}

// Runs `eval(device)` on the device for `threads`.
template <typename Eval>
void on_device(int threads, Eval&& eval) {
  if (threads <= 1) {
    Eigen::DefaultDevice device;
    eval(device);
  } else {
    eval(pool_device(threads));
  }
}

void p2(const float* a, const float* b, float* out, int64_t n, int threads) {
  ConstVec A(a, n), B(b, n);
  Vec O(out, n);
  on_device(threads, [&](const auto& d) { O.device(d) = ((A * 1.5f + B).cwiseMax(0.0f) - (-(A * A)).exp()) * B.tanh(); });
}

void p3(const float* x, float* out, int64_t n, int threads) {
  ConstVec X(x, n);
  Vec O(out, n);
  on_device(threads,
            [&](const auto& d) { O.device(d) = 0.5f * X * (1.0f + (0.79788456f * (X + 0.044715f * X.cube())).tanh()); });
}

// As TensorFlow's Eigen softmax: the row maxima and the row sums are
// evaluated into temporaries, broadcast back over the rows.
void softmax(const float* x, float* out, int64_t rows, int64_t cols, int threads) {
  ConstMat X(x, rows, cols);
  Mat O(out, rows, cols);
  const Eigen::array<Index, 1> along_cols{{1}};
  const Eigen::array<Index, 2> rows_by_one{{rows, 1}}, one_by_cols{{1, cols}};
  on_device(threads, [&](const auto& d) {
    O.device(d) = (X - X.maximum(along_cols).eval().reshape(rows_by_one).broadcast(one_by_cols)).exp();
    O.device(d) = O * O.sum(along_cols).inverse().eval().reshape(rows_by_one).broadcast(one_by_cols);
  });
}

// Mean, then the centred rows (into the output), their variance, and the
// normalized output: one pass over x and three over the output, the per-row
// statistics in small temporaries. (Reducing over a broadcast expression
// instead, (x - mean).square().mean(), runs several times slower in Eigen.)
void layer_norm(const float* x, const float* w, const float* b, float eps, float* out, int64_t rows, int64_t cols,
                int threads) {
  ConstMat X(x, rows, cols);
  ConstVec W(w, cols), B(b, cols);
  Mat O(out, rows, cols);
  const Eigen::array<Index, 1> along_cols{{1}};
  const Eigen::array<Index, 2> rows_by_one{{rows, 1}}, one_by_cols{{1, cols}}, by_rows{{rows, 1}};
  Eigen::Tensor<float, 1, Eigen::RowMajor, Index> mean(rows), rstd(rows);
  on_device(threads, [&](const auto& d) {
    auto row_bcast = [&](const auto& v) { return v.reshape(rows_by_one).broadcast(one_by_cols); };
    auto col_bcast = [&](const auto& v) { return v.reshape(one_by_cols).broadcast(by_rows); };
    mean.device(d) = X.mean(along_cols);
    O.device(d) = X - row_bcast(mean);
    rstd.device(d) = (O.square().mean(along_cols) + eps).rsqrt();
    O.device(d) = O * row_bcast(rstd) * col_bcast(W) + col_bcast(B);
  });
}

}  // namespace

namespace wok_bench {
extern const EigenReference EIGEN_REFERENCE_NAME;
const EigenReference EIGEN_REFERENCE_NAME = {EIGEN_REFERENCE_BUILD, p2, p3, softmax, layer_norm};
}  // namespace wok_bench
