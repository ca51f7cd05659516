#include "wok/runtime/op_def.h"

#include "wok/runtime/error.h"

namespace wok {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kReduction: return "reduction";
    case OpKind::kMovement: return "movement";
    case OpKind::kCreation: return "creation";
    case OpKind::kOpaque: return "opaque";
  }
  return "?";
}

std::vector<Shape> broadcast_all_inputs(std::span<const Shape> inputs, const Attrs&) {
  // Most calls broadcast into one of their inputs' shapes (equal shapes, a
  // scalar, a bias row): that shape is the result, copied once. This runs
  // at every recorded elementwise op.
  const Shape* widest = nullptr;
  for (const Shape& s : inputs)
    if (!widest || s.size() > widest->size()) widest = &s;
  bool is_result = widest != nullptr;
  for (const Shape& s : inputs) {
    const size_t offset = widest->size() - s.size();
    for (size_t i = 0; i < s.size() && is_result; ++i)
      is_result = s[i] == (*widest)[offset + i] || s[i] == 1;
  }
  std::vector<Shape> out(1);
  if (is_result) {
    out[0] = *widest;
    return out;
  }
  for (const Shape& s : inputs) {
    std::optional<Shape> b = broadcast_shapes(out[0], s);
    if (!b) throw ShapeError("shapes cannot be broadcast together");
    out[0] = std::move(*b);
  }
  return out;
}

}  // namespace wok
