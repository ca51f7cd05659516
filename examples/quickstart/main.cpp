// The quickstart: eager-looking code, recorded lazily, run when read.
#include <cstdio>
#include <vector>

#include <wok/wok.h>

int main() {
  wok::Tensor a = wok::from_vector(std::vector<float>{1, -2, 3, -4}, {2, 2});
  wok::Tensor b = wok::rand({2, 2}, /*seed=*/7);          // uniform [0,1), float32, cpu
  wok::Tensor c = wok::relu(a * 2.0f + b) - wok::exp(-a);  // recorded only
  wok::Tensor s = wok::sum(c, {1}, /*keepdims=*/false);
  wok::eval({c, s});
  std::vector<float> v = c.to_vector<float>();
  float total = wok::sum(c).item<float>();
  wok::Tensor m = wok::maximum(wok::tanh(a), wok::sigmoid(b)).reshape({4});
  wok::Tensor w = wok::where(a > 0.0f, a, b);

  std::printf("a = %s\n", a.str().c_str());
  std::printf("b = %s\n", b.str().c_str());
  std::printf("c = relu(2a + b) - exp(-a) = %s\n", c.str().c_str());
  std::printf("row sums of c = %s, total = %g (first element %g)\n", s.str().c_str(), total, v[0]);
  std::printf("max(tanh(a), sigmoid(b)) = %s\n", m.str().c_str());
  std::printf("where(a > 0, a, b) = %s\n", w.str().c_str());
  wok::Tensor p = wok::softmax(wok::matmul(a, b.transpose()));
  std::printf("softmax(a @ b^T) = %s\n", p.str().c_str());
  // Captured once, replayed on every later call with the same shapes.
  auto step = wok::compile([](const wok::Tensor& x) { return wok::softmax(x * 2.0f); });
  wok::Tensor q1 = step(a), q2 = step(a * -1.0f);
  std::printf("compiled softmax(2a) = %s, of -a: %s\n", q1.str().c_str(), q2.str().c_str());
  std::printf("backend: %s\n", std::string(wok::backend_name(wok::backend())).c_str());
  std::printf("%s", wok::stats().str().c_str());
  return 0;
}
