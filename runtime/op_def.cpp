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
  Shape out;
  for (const Shape& s : inputs) {
    std::optional<Shape> b = broadcast_shapes(out, s);
    if (!b) throw ShapeError("shapes cannot be broadcast together");
    out = std::move(*b);
  }
  return {out};
}

}  // namespace wok
