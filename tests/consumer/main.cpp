// The snippet from the foundation issue, compiled against the installed
// package: it must build and run as written.
#include <cstdio>
#include <vector>

#include <wok/wok.h>

int main() {
  wok::Tensor a = wok::from_vector(std::vector<float>{1, -2, 3, -4}, {2, 2});
  wok::Tensor b = wok::rand({2, 2}, /*seed=*/7);            // uniform [0,1), float32, cpu
  wok::Tensor c = wok::relu(a * 2.0f + b) - wok::exp(-a);    // recorded only
  wok::Tensor s = wok::sum(c, {1}, /*keepdims=*/false);
  wok::eval({c, s});
  std::vector<float> v = c.to_vector<float>();
  float total = wok::sum(c).item<float>();
  wok::Tensor m = wok::maximum(wok::tanh(a), wok::sigmoid(b)).reshape({4});
  wok::Tensor w = wok::where(a > 0.0f, a, b);

  std::printf("consumer: c[0] = %g, total = %g, m[0] = %g, w[1] = %g\n", v[0], total,
              m.to_vector<float>()[0], w.to_vector<float>()[1]);
  return 0;
}
