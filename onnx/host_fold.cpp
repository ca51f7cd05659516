#include "wok/onnx/host_fold.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace wok::onnx {

namespace {

using Known = std::shared_ptr<const HostValues>;
using Folded = std::vector<Known>;

// Values in `t`'s dtype: integers (and bool) keep exact int64 values beside
// the doubles; floats only the doubles (HostValues' convention).
Known make_values(DType t, std::vector<double> doubles) {
  auto v = std::make_shared<HostValues>();
  if (!is_floating(t)) {
    v->ints.reserve(doubles.size());
    for (double d : doubles) v->ints.push_back(static_cast<int64_t>(d));
  }
  v->doubles = std::move(doubles);
  return v;
}

Known make_ints(DType t, const std::vector<int64_t>& ints) {
  auto v = std::make_shared<HostValues>();
  v->doubles.assign(ints.begin(), ints.end());
  if (is_floating(t)) return v;
  v->ints = ints;
  if (t == DType::kBool)
    for (int64_t& i : v->ints) i = i != 0;
  return v;
}

bool all_known(const NodeContext& c, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!c.known(i)) return false;
  return true;
}

// Input index (flat, row-major) of each output element under NumPy
// broadcasting of `in` to `out`.
std::vector<int64_t> broadcast_map(const Shape& in, const Shape& out) {
  const size_t r = out.size(), lead = r - in.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (size_t d = r; d-- > lead;) {
    const int64_t size = in[d - lead];
    stride[d] = size == 1 ? 0 : s;
    s *= size;
  }
  std::vector<int64_t> map(static_cast<size_t>(numel(out)));
  std::vector<int64_t> index(r, 0);
  for (size_t flat = 0; flat < map.size(); ++flat) {
    int64_t at = 0;
    for (size_t d = 0; d < r; ++d) at += index[d] * stride[d];
    map[flat] = at;
    for (size_t d = r; d-- > 0;)
      if (++index[d] < out[d]) break;
      else index[d] = 0;
  }
  return map;
}

// Values that pass through unchanged (reshapes), converted to the output's
// dtype (Cast, CastLike).
Folded same_values(const NodeContext& c, const Outputs& outs) {
  if (!all_known(c, {0})) return {};
  const HostValues& in = *c.known(0);
  const DType t = outs[0].dtype();
  if (!is_floating(t) && !in.ints.empty()) return {make_ints(t, in.ints)};
  std::vector<double> d = in.doubles;
  if (!is_floating(t))
    for (double& e : d) e = t == DType::kBool ? (e != 0) : std::trunc(e);
  else if (t == DType::kFloat32)
    for (double& e : d) e = static_cast<float>(e);
  return {make_values(t, std::move(d))};
}

Folded fold_shape(const NodeContext& c, const Outputs& outs) {
  return {make_ints(DType::kInt64, shape_values(c))};
}

Folded fold_size(const NodeContext& c, const Outputs& outs) {
  return {make_ints(DType::kInt64, {c.input(0).numel()})};
}

Folded fold_concat(const NodeContext& c, const Outputs& outs) {
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (!c.known(i)) return {};
  // Along the first axis, a concatenation of the flat values; along
  // another, copy blocks of `inner` elements per outer index.
  const Shape& shape = outs[0].shape();
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), static_cast<int64_t>(shape.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  // Exact int64 values where every input has them (integer dtypes).
  const bool exact = !is_floating(outs[0].dtype());
  std::vector<double> v;
  std::vector<int64_t> ints;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < c.num_inputs(); ++i) {
      const int64_t block = c.input(i).shape()[static_cast<size_t>(axis)] * inner;
      const HostValues& k = *c.known(i);
      v.insert(v.end(), k.doubles.begin() + o * block, k.doubles.begin() + (o + 1) * block);
      if (exact) ints.insert(ints.end(), k.ints.begin() + o * block, k.ints.begin() + (o + 1) * block);
    }
  return {exact ? make_ints(outs[0].dtype(), ints) : make_values(outs[0].dtype(), std::move(v))};
}

Folded fold_gather(const NodeContext& c, const Outputs& outs) {
  if (!all_known(c, {0, 1})) return {};
  const Shape& data = c.input(0).shape();
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), static_cast<int64_t>(data.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < data.size(); ++d) inner *= data[d];
  const int64_t n = data[static_cast<size_t>(axis)];
  const HostValues& values = *c.known(0);
  const bool exact = !values.ints.empty() || values.doubles.empty();
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : c.known(1)->ints) {
      const int64_t i = index < 0 ? index + n : index;  // the converter's gather has checked the range
      if (i < 0 || i >= n) return {};
      for (int64_t k = 0; k < inner; ++k) {
        const auto at = static_cast<size_t>((o * n + i) * inner + k);
        if (exact && !is_floating(outs[0].dtype())) ints.push_back(values.ints[at]);
        doubles.push_back(values.doubles[at]);
      }
    }
  return {exact && !is_floating(outs[0].dtype()) ? make_ints(outs[0].dtype(), ints)
                                                 : make_values(outs[0].dtype(), std::move(doubles))};
}

// Slice of a 1-D tensor (the shapes exporters slice); Python's bounds.
Folded fold_slice(const NodeContext& c, const Outputs& outs) {
  if (c.input(0).ndim() != 1 || !c.known(0) || c.opset() < 10 || !all_known(c, {1, 2})) return {};
  if ((c.has_input(3) && !c.known(3)) || (c.has_input(4) && !c.known(4))) return {};
  const int64_t n = c.input(0).shape()[0];
  const int64_t start = c.known(1)->ints.at(0), end = c.known(2)->ints.at(0);
  const int64_t step = c.has_input(4) ? c.known(4)->ints.at(0) : 1;
  if (step == 0) return {};
  auto clamp = [&](int64_t i, int64_t lo, int64_t hi) { return std::clamp(i < 0 ? i + n : i, lo, hi); };
  std::vector<size_t> picked;
  if (step > 0)
    for (int64_t i = clamp(start, 0, n), e = clamp(end, 0, n); i < e; i += step) picked.push_back(static_cast<size_t>(i));
  else
    for (int64_t i = clamp(start, -1, n - 1), e = clamp(end, -1, n - 1); i > e; i += step)
      picked.push_back(static_cast<size_t>(i));
  if (static_cast<int64_t>(picked.size()) != outs[0].numel()) return {};
  const HostValues& in = *c.known(0);
  std::vector<double> d;
  std::vector<int64_t> ints;
  for (size_t i : picked) {
    d.push_back(in.doubles[i]);
    if (!in.ints.empty()) ints.push_back(in.ints[i]);
  }
  if (!in.ints.empty() && !is_floating(outs[0].dtype())) return {make_ints(outs[0].dtype(), ints)};
  return {make_values(outs[0].dtype(), std::move(d))};
}

// Elementwise ops over broadcast inputs: integer arithmetic exact in int64
// (wrapping, Div truncating as the converter's does), comparisons giving
// bool.
template <size_t kArity>
Folded fold_elementwise(const NodeContext& c, const Outputs& outs,
                        const std::function<double(const double*)>& on_doubles,
                        const std::function<int64_t(const int64_t*)>& on_ints) {
  if (c.num_inputs() != kArity) return {};
  for (size_t i = 0; i < kArity; ++i)
    if (!c.known(i)) return {};
  const Shape& out = outs[0].shape();
  std::vector<std::vector<int64_t>> maps;
  bool exact = true;
  for (size_t i = 0; i < kArity; ++i) {
    maps.push_back(broadcast_map(c.input(i).shape(), out));
    exact = exact && !is_floating(c.input(i).dtype()) && !c.known(i)->ints.empty();
  }
  const size_t n = static_cast<size_t>(numel(out));
  if (exact && on_ints) {
    std::vector<int64_t> v(n);
    for (size_t e = 0; e < n; ++e) {
      int64_t args[kArity];
      for (size_t i = 0; i < kArity; ++i) args[i] = c.known(i)->ints[static_cast<size_t>(maps[i][e])];
      v[e] = on_ints(args);
    }
    return {make_ints(outs[0].dtype(), v)};
  }
  std::vector<double> v(n);
  for (size_t e = 0; e < n; ++e) {
    double args[kArity];
    for (size_t i = 0; i < kArity; ++i) args[i] = c.known(i)->doubles[static_cast<size_t>(maps[i][e])];
    v[e] = on_doubles(args);
  }
  if (outs[0].dtype() == DType::kFloat32)
    for (double& e : v) e = static_cast<float>(e);
  return {make_values(outs[0].dtype(), std::move(v))};
}

int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

#define WOK_FOLD_BINARY(fn, dexpr, iexpr)                                                          \
  Folded fn(const NodeContext& c, const Outputs& outs) {                                           \
    return fold_elementwise<2>(                                                                    \
        c, outs, [](const double* x) -> double { const double a = x[0], b = x[1]; return dexpr; }, \
        [](const int64_t* x) -> int64_t { const int64_t a = x[0], b = x[1]; return iexpr; });      \
  }

WOK_FOLD_BINARY(fold_add, a + b, wrap_add(a, b))
WOK_FOLD_BINARY(fold_sub, a - b, wrap_sub(a, b))
WOK_FOLD_BINARY(fold_mul, a * b, wrap_mul(a, b))
// Integer division by zero is left to the recorded op (it is an error there).
WOK_FOLD_BINARY(fold_div, a / b, b == 0 ? 0 : (a == INT64_MIN && b == -1) ? a : a / b)
WOK_FOLD_BINARY(fold_equal, a == b, a == b)
WOK_FOLD_BINARY(fold_less, a < b, a < b)
WOK_FOLD_BINARY(fold_greater, a > b, a > b)
WOK_FOLD_BINARY(fold_max, std::isnan(a) || a > b ? a : b, std::max(a, b))
WOK_FOLD_BINARY(fold_min, std::isnan(a) || a < b ? a : b, std::min(a, b))
#undef WOK_FOLD_BINARY

Folded fold_div_checked(const NodeContext& c, const Outputs& outs) {
  if (c.known(1) && !is_floating(c.input(1).dtype()))
    for (int64_t b : c.known(1)->ints)
      if (b == 0) return {};
  return fold_div(c, outs);
}

Folded fold_where(const NodeContext& c, const Outputs& outs) {
  return fold_elementwise<3>(
      c, outs, [](const double* x) { return x[0] != 0 ? x[1] : x[2]; },
      // Exact only when the condition and both branches are integers.
      [](const int64_t* x) { return x[0] != 0 ? x[1] : x[2]; });
}

Folded fold_neg(const NodeContext& c, const Outputs& outs) {
  return fold_elementwise<1>(
      c, outs, [](const double* x) { return -x[0]; }, [](const int64_t* x) { return wrap_sub(0, x[0]); });
}

Folded fold_not(const NodeContext& c, const Outputs& outs) {
  return fold_elementwise<1>(
      c, outs, [](const double* x) -> double { return x[0] == 0; }, [](const int64_t* x) -> int64_t { return x[0] == 0; });
}

Folded fold_range(const NodeContext& c, const Outputs& outs) {
  if (!all_known(c, {0, 1, 2})) return {};
  const int64_t n = outs[0].numel();
  if (!is_floating(outs[0].dtype())) {
    const int64_t start = c.known(0)->ints.at(0), delta = c.known(2)->ints.at(0);
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = wrap_add(start, wrap_mul(i, delta));
    return {make_ints(outs[0].dtype(), v)};
  }
  return {};  // float ranges are left to the recorded op
}

const std::map<std::string, FoldFn>& fold_rules() {
  static const std::map<std::string, FoldFn> rules = {
      {"Shape", fold_shape},       {"Size", fold_size},           {"Identity", same_values},
      {"Reshape", same_values},    {"Unsqueeze", same_values},    {"Squeeze", same_values},
      {"Flatten", same_values},    {"Cast", same_values},         {"CastLike", same_values},
      {"Concat", fold_concat},     {"Gather", fold_gather},       {"Slice", fold_slice},
      {"Add", fold_add},           {"Sub", fold_sub},             {"Mul", fold_mul},
      {"Div", fold_div_checked},   {"Equal", fold_equal},         {"Less", fold_less},
      {"Greater", fold_greater},   {"Max", fold_max},             {"Min", fold_min},
      {"Where", fold_where},       {"Neg", fold_neg},             {"Not", fold_not},
      {"Range", fold_range},
  };
  return rules;
}

}  // namespace

std::vector<int64_t> shape_values(const NodeContext& c) {
  const Shape& shape = c.input(0).shape();
  const auto rank = static_cast<int64_t>(shape.size());
  auto clamp_index = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp_index(c.attr_int("start", 0));
  const int64_t end = clamp_index(c.attr_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(shape[static_cast<size_t>(d)]);
  return dims;
}

FoldFn find_fold_rule(const std::string& op_type) {
  auto it = fold_rules().find(op_type);
  return it == fold_rules().end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const HostValues>> fold_on_host(FoldFn rule, const NodeContext& c, const Outputs& outs,
                                                            int64_t max_elements) {
  if (!rule || outs.size() != 1 || !outs[0].defined() || outs[0].numel() > max_elements) return {};
  Folded folded = rule(c, outs);
  if (folded.size() == 1 && folded[0] && folded[0]->doubles.size() != static_cast<size_t>(outs[0].numel())) return {};
  return folded;
}

}  // namespace wok::onnx
