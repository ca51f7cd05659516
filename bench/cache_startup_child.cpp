// The program bench_cache_startup starts: 24 small programs, each one
// distinct generated kernel (12 functions of a chain, float32 and float64),
// whose results are summed into one number. Prints that first result and
// the kernel counters on one line as soon as it has them.
#include <wok/wok.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

template <typename T>
double program(int fn) {
  constexpr int kN = 4096;
  std::vector<T> av(kN), bv(kN);
  for (int i = 0; i < kN; ++i) {
    av[i] = static_cast<T>(std::sin(0.01 * i));
    bv[i] = static_cast<T>(std::cos(0.02 * i));
  }
  wok::Tensor a = wok::from_vector(av), b = wok::from_vector(bv);
  wok::Tensor x = a * 1.5 + b;
  wok::Tensor y;
  switch (fn) {
    case 0:
      y = wok::exp(-x) * b;
      break;
    case 1:
      y = wok::tanh(x) - a;
      break;
    case 2:
      y = wok::sin(x) * wok::cos(a);
      break;
    case 3:
      y = wok::erf(x) + b * b;
      break;
    case 4:
      y = wok::sigmoid(x) * a;
      break;
    case 5:
      y = wok::gelu(x);
      break;
    case 6:
      y = wok::silu(x) - b;
      break;
    case 7:
      y = wok::log(wok::abs(x) + 1.0);
      break;
    case 8:
      y = wok::sqrt(wok::abs(x)) * a;
      break;
    case 9:
      y = wok::maximum(x, b) - wok::minimum(a, b);
      break;
    case 10:
      y = wok::clamp(x, -0.5, 0.5) * 2.0;
      break;
    default:
      y = wok::where(x > 0.0, x, a * b);
      break;
  }
  std::vector<T> v = y.template to_vector<T>();
  double s = 0;
  for (T e : v) s += static_cast<double>(e);
  return s;
}

}  // namespace

int main() {
  double total = 0;
  for (int fn = 0; fn < 12; ++fn) total += program<float>(fn) + program<double>(fn);
  wok::RuntimeStats s = wok::stats();
  std::printf("result=%.6f compiled=%lld disk_hits=%lld\n", total, static_cast<long long>(s.kernels_compiled),
              static_cast<long long>(s.disk_hits));
  std::fflush(stdout);
  return 0;
}
