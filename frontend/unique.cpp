// unique: distinct values or slices, computed on the host from x's values
// (its output size depends on them, as nonzero's does).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/scans.h"
#include "wok/runtime/error.h"

namespace wok {

namespace {

// sort's order: numbers ascending, nan above +inf and equal to itself.
template <typename T>
int compare_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T> || is_half_type_v<T>) {
    const bool na = std::isnan(static_cast<double>(a)), nb = std::isnan(static_cast<double>(b));
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

UniqueResult unique(const Tensor& x, bool sorted, std::optional<int64_t> axis) {
  WOK_CALLER_SCOPE();
  if (!x.defined()) throw ArgumentError("wok::unique: x is an undefined wok::Tensor");
  // Slices along the axis, moved to the front: slice i is the contiguous
  // block [i * inner, (i + 1) * inner) of `front`.
  Tensor front = reshape(x, {x.numel()});
  int64_t a = 0;
  if (axis) {
    a = *axis < 0 ? *axis + x.ndim() : *axis;
    if (a < 0 || a >= x.ndim())
      throw ShapeError("wok::unique: axis " + std::to_string(*axis) + " is out of range for x " +
                       std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
    std::vector<int64_t> order{a};
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (d != a) order.push_back(d);
    front = permute(x, order);
  }
  const int64_t slices = axis ? x.shape()[static_cast<size_t>(a)] : x.numel();
  const int64_t inner = slices == 0 ? 0 : x.numel() / slices;
  UniqueResult r;
  visit_any_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> v = front.to_vector<T>();  // evaluates x
    auto cmp = [&](int64_t i, int64_t j) {
      for (int64_t k = 0; k < inner; ++k)
        if (int c = compare_values(v[static_cast<size_t>(i * inner + k)], v[static_cast<size_t>(j * inner + k)])) return c;
      return 0;
    };
    std::vector<int64_t> by_value(static_cast<size_t>(slices));
    std::iota(by_value.begin(), by_value.end(), 0);
    std::stable_sort(by_value.begin(), by_value.end(), [&](int64_t i, int64_t j) { return cmp(i, j) < 0; });
    // Groups of equal slices; each one's first position is its first
    // member, the sort being stable.
    std::vector<int64_t> first, counts, group_of(static_cast<size_t>(slices));
    for (size_t p = 0; p < by_value.size(); ++p) {
      if (p == 0 || cmp(by_value[p - 1], by_value[p]) != 0) {
        first.push_back(by_value[p]);
        counts.push_back(0);
      }
      ++counts.back();
      group_of[static_cast<size_t>(by_value[p])] = static_cast<int64_t>(first.size()) - 1;
    }
    std::vector<int64_t> rank(first.size());  // group -> its position in the output
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted) {
      std::vector<int64_t> order(first.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t g, int64_t h) { return first[static_cast<size_t>(g)] < first[static_cast<size_t>(h)]; });
      for (size_t p = 0; p < order.size(); ++p) rank[static_cast<size_t>(order[p])] = static_cast<int64_t>(p);
    }
    const auto k = static_cast<int64_t>(first.size());
    std::vector<T> values(static_cast<size_t>(k * inner));
    std::vector<int64_t> indices(static_cast<size_t>(k)), count_out(static_cast<size_t>(k)), inverse(static_cast<size_t>(slices));
    for (size_t g = 0; g < first.size(); ++g) {
      const auto at = static_cast<size_t>(rank[g]);
      indices[at] = first[g];
      count_out[at] = counts[g];
      std::copy_n(v.begin() + first[g] * inner, inner, values.begin() + static_cast<int64_t>(at) * inner);
    }
    for (size_t i = 0; i < inverse.size(); ++i) inverse[i] = rank[static_cast<size_t>(group_of[i])];
    Shape shape{k};
    if (axis) {  // [k, other dims...], then the axis moved back
      std::vector<int64_t> back(static_cast<size_t>(x.ndim()));
      for (int64_t d = 0; d < x.ndim(); ++d)
        if (d != a) shape.push_back(x.shape()[static_cast<size_t>(d)]);
      // Output dim d comes from front dim: a -> 0, others in order.
      for (int64_t d = 0, j = 1; d < x.ndim(); ++d) back[static_cast<size_t>(d)] = d == a ? 0 : j++;
      r.values = permute(from_vector(values, shape, x.device()), back);
    } else {
      r.values = from_vector(values, shape, x.device());
    }
    r.indices = from_vector(indices, {k}, x.device());
    r.inverse = from_vector(inverse, {slices}, x.device());
    r.counts = from_vector(count_out, {k}, x.device());
  });
  return r;
}

}  // namespace wok
