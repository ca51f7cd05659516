#include "wok/runtime/shape.h"

#include <algorithm>

namespace wok {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

Strides broadcast_strides(const Shape& in, const Shape& out) {
  Strides contiguous = contiguous_strides(in);
  Strides strides(out.size(), 0);
  size_t offset = out.size() - in.size();
  // A size-1 dim never advances, whether it is broadcast or not.
  for (size_t i = 0; i < in.size(); ++i) strides[offset + i] = in[i] == 1 ? 0 : contiguous[i];
  return strides;
}

CollapsedLayout collapse_layout(const Shape& out, const std::vector<const Shape*>& inputs) {
  const size_t n = inputs.size() + 1;
  std::vector<Strides> full(n);
  full[0] = contiguous_strides(out);
  for (size_t k = 1; k < n; ++k) full[k] = broadcast_strides(*inputs[k - 1], out);
  CollapsedLayout l;
  l.strides.resize(n);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;  // never advances
    if (!l.shape.empty()) {
      bool mergeable = true;
      for (size_t k = 0; k < n && mergeable; ++k) mergeable = full[k][i] * out[i] == l.strides[k].back();
      if (mergeable) {
        l.shape.back() *= out[i];
        for (size_t k = 0; k < n; ++k) l.strides[k].back() = full[k][i];
        continue;
      }
    }
    l.shape.push_back(out[i]);
    for (size_t k = 0; k < n; ++k) l.strides[k].push_back(full[k][i]);
  }
  if (l.shape.empty()) {
    l.shape.push_back(1);
    for (size_t k = 0; k < n; ++k) l.strides[k].push_back(0);
  }
  return l;
}

std::optional<int> normalize_axis(int64_t axis, int ndim) {
  if (axis < 0) axis += ndim;
  if (axis < 0 || axis >= ndim) return std::nullopt;
  return static_cast<int>(axis);
}

}  // namespace wok
