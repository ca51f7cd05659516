#include <gtest/gtest.h>
#include <cmath>
#include <wok/wok.h>
TEST(Smoke, Basic) {
  wok::Tensor a = wok::from_vector(std::vector<float>{1, -2, 3, -4}, {2, 2});
  wok::Tensor c = wok::relu(a * 2.0f) - wok::exp(-a);
  auto v = c.to_vector<float>();
  EXPECT_NEAR(v[0], 2 - std::exp(-1.0f), 1e-6);
}
