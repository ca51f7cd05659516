// What the elementwise op tests share (elementwise_ops_test.cpp,
// elementwise_dtypes_test.cpp, binary_ops_test.cpp, pow_op_test.cpp):
// special constants, the ulp report, and the pairs of binary inputs.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"

namespace wt {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline void report_ulp(const std::string& op, wok::DType dt, const wt::UlpReport& r) {
  if (std::getenv("WOK_TEST_ULP"))
    std::printf("[ulp] %-11s %-10s %-8s max %.3f ulp (index %zu)\n",
                std::string(wok::backend_name(wok::backend())).c_str(), op.c_str(), wt::dname(dt).c_str(), r.max_ulp,
                r.worst_index);
}

// ---- binary inputs ---------------------------------------------------------------------

template <typename T>
struct Pairs {
  std::vector<T> a, b;
  wt::Describe describe() const {
    return [this](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
  }
};

// Every pair of special / edge values, then random pairs in [lo, hi].
template <typename T>
Pairs<T> binary_inputs(double lo, double hi, uint32_t seed = 5) {
  Pairs<T> p;
  std::vector<T> edges;
  if constexpr (std::is_same_v<T, bool>)
    edges = {false, true};
  else if constexpr (std::is_integral_v<T>)
    edges = wt::integer_edges<T>();
  else
    edges = wt::special_values<T>();
  for (T x : edges)
    for (T y : edges) {
      p.a.push_back(x);
      p.b.push_back(y);
    }
  std::vector<T> ra = wt::random_values<T>(512, lo, hi, seed), rb = wt::random_values<T>(512, lo, hi, seed + 1);
  p.a.insert(p.a.end(), ra.begin(), ra.end());
  p.b.insert(p.b.end(), rb.begin(), rb.end());
  return p;
}

}  // namespace wt
