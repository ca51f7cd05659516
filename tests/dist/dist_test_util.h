// Shared by the distributed tests (wok_dist_tests): every rank's input is a
// function of (rank, index, salt), so each rank computes the single-process
// reference for the whole group on its own.
//
// Every rank must issue the same collectives in the same order, so the
// tests check with EXPECT_* (never ASSERT_* before a later collective): a
// failure on one rank must not make it skip a collective the others wait in.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "wok/frontend/dist.h"

namespace wok {
inline void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }
namespace dist {
inline void PrintTo(ReduceOp op, std::ostream* os) { *os << reduce_op_name(op); }
}  // namespace dist
}  // namespace wok

namespace dt {

using wok::DType;
using wok::Shape;
using wok::Tensor;
using wok::dist::ReduceOp;

inline std::string dname(DType t) { return std::string(wok::dtype_name(t)); }
inline std::string opname(ReduceOp op) { return std::string(wok::dist::reduce_op_name(op)); }

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

inline uint32_t mix(uint64_t rank, uint64_t index, uint64_t salt) {
  uint64_t h = rank * 0x9E3779B97F4A7C15ull ^ (index + 1) * 0xC2B2AE3D27D4EB4Full ^ (salt + 7) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<uint32_t>(h);
}

// Values whose sums, products (kProd: factors in {-2, -1, 1, 2}) and means
// are exact in every dtype for up to 8 ranks, so MPI's order of reduction
// cannot change a result.
enum class Values { kGeneral, kFactors };

template <typename T>
T value(int rank, int64_t index, uint64_t salt, Values kind = Values::kGeneral) {
  const uint32_t h = mix(static_cast<uint64_t>(rank), static_cast<uint64_t>(index), salt);
  if constexpr (std::is_same_v<T, bool>) {
    return h % 3 != 0;
  } else if (kind == Values::kFactors) {
    static constexpr int kFactors[4] = {-2, -1, 1, 2};
    return static_cast<T>(kFactors[h % 4]);
  } else {
    return static_cast<T>(static_cast<int>(h % 201) - 100);
  }
}

template <typename T>
std::vector<T> values(int rank, int64_t n, uint64_t salt, Values kind = Values::kGeneral) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value<T>(rank, i, salt, kind);
  return v;
}

template <typename T>
Tensor input(int rank, const Shape& shape, uint64_t salt, Values kind = Values::kGeneral) {
  return wok::from_vector(values<T>(rank, numel_of(shape), salt, kind), shape);
}

inline Values values_for(ReduceOp op) { return op == ReduceOp::kProd ? Values::kFactors : Values::kGeneral; }

template <typename T>
T combine(ReduceOp op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == ReduceOp::kSum || op == ReduceOp::kMax ? (a || b) : (a && b);
  } else {
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean: return static_cast<T>(a + b);
      case ReduceOp::kProd: return static_cast<T>(a * b);
      case ReduceOp::kMax: return a > b ? a : b;
      case ReduceOp::kMin: return a < b ? a : b;
    }
    return a;
  }
}

// The reduction over `ranks` (world ranks, in order) of each rank's values.
template <typename T>
std::vector<T> reduce_ref(ReduceOp op, const std::vector<int>& ranks, int64_t n, uint64_t salt) {
  std::vector<T> acc = values<T>(ranks[0], n, salt, values_for(op));
  for (size_t k = 1; k < ranks.size(); ++k) {
    std::vector<T> v = values<T>(ranks[k], n, salt, values_for(op));
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = combine<T>(op, acc[i], v[i]);
  }
  if constexpr (std::is_floating_point_v<T>)
    if (op == ReduceOp::kMean)
      for (T& a : acc) a /= static_cast<T>(ranks.size());
  return acc;
}

inline std::vector<int> iota_ranks(int n) {
  std::vector<int> r(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) r[static_cast<size_t>(i)] = i;
  return r;
}

template <typename T>
std::string show(T v) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>)
    out << (v ? "true" : "false");
  else
    out << +v;
  return out.str();
}

// Compares a tensor's shape, dtype and values with the reference; the
// message names what was computed and the first element that differs.
template <typename T>
::testing::AssertionResult matches(const Tensor& got, const Shape& want_shape, const std::vector<T>& want) {
  if (got.dtype() != wok::dtype_of<T>())
    return ::testing::AssertionFailure() << "dtype " << dname(got.dtype()) << ", want " << dname(wok::dtype_of<T>());
  if (got.shape() != want_shape)
    return ::testing::AssertionFailure() << "shape " << shape_text(got.shape()) << ", want " << shape_text(want_shape);
  std::vector<T> v = got.to_vector<T>();
  if (v.size() != want.size())
    return ::testing::AssertionFailure() << v.size() << " elements, want " << want.size();
  int bad = 0;
  ::testing::AssertionResult r = ::testing::AssertionSuccess();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == want[i]) continue;
    if (bad == 0) r = ::testing::AssertionFailure();
    if (bad < 5) r << "\n  at " << i << ": got " << show<T>(v[i]) << ", want " << show<T>(want[i]);
    ++bad;
  }
  if (bad > 5) r << "\n  ... " << bad << " elements differ in all";
  return r;
}

// Calls fn(T{}) for `t`'s C++ type.
template <typename Fn>
void for_dtype(DType t, Fn&& fn) {
  wok::visit_dtype(t, fn);
}

// Runs `fn` and returns the message of the wok::Error subclass E it throws,
// or a message saying what happened instead (with `*ok` false).
template <typename E, typename Fn>
std::string error_of(Fn&& fn, bool* ok) {
  *ok = false;
  try {
    fn();
    return "no exception";
  } catch (const E& e) {
    *ok = true;
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another exception: ") + e.what();
  }
}

// EXPECT that `stmt` throws E whose message contains every string of `parts`.
#define DT_EXPECT_ERROR(E, stmt, ...)                                                          \
  do {                                                                                         \
    bool dt_ok_ = false;                                                                       \
    const std::string dt_msg_ = ::dt::error_of<E>([&] { stmt; }, &dt_ok_);                     \
    EXPECT_TRUE(dt_ok_) << #stmt << ": wanted " #E ", got: " << dt_msg_;                       \
    for (const std::string& dt_part_ : std::vector<std::string>{__VA_ARGS__})                  \
      EXPECT_NE(dt_msg_.find(dt_part_), std::string::npos)                                     \
          << #stmt << ": message lacks \"" << dt_part_ << "\": " << dt_msg_;                   \
  } while (0)

}  // namespace dt
