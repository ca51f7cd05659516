// Shape arithmetic on the host while a model is recorded.
//
// Note [Folding shape subgraphs]
// Exporters write a tensor's shape as a computation: Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, with Slice, Cast and integer arithmetic
// between. wok's ops take shapes as values, so a converter that needs one
// (Reshape's target, Expand's shape, Slice's bounds) reads it; read from a
// lazy tensor, that evaluates what computes it in the middle of recording
// and, inside wok::compile, is refused (CaptureError). Every value on such
// a path is known while recording, though: Shape and Size come from the
// static shapes, the rest from constants. So after each node, the values of
// its outputs are computed here on the host when every input it reads has
// known values (HostValues) and its op type has a rule below, and later
// nodes read them as they read a constant's. The node's wok ops are still
// recorded (a model output may be a shape), so nothing changes but when the
// values become known. Like hand-written code that passes x.shape()[0] to
// reshape, a compiled function then holds the shapes it was traced with.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wok/onnx/converters.h"

namespace wok::onnx {

// The values of a Shape node's output: input 0's dims [start, end).
std::vector<int64_t> shape_values(const NodeContext& c);

// An op type's host rule (null when it has none), looked up once at load.
using FoldFn = std::vector<std::shared_ptr<const HostValues>> (*)(const NodeContext&, const Outputs&);
FoldFn find_fold_rule(const std::string& op_type);

// Per output of the node `c` describes (converted to `outs`): its values,
// or null where they are not known. Empty when `rule` is null, gives up, or
// an output has more than max_elements.
std::vector<std::shared_ptr<const HostValues>> fold_on_host(FoldFn rule, const NodeContext& c, const Outputs& outs,
                                                            int64_t max_elements);

}  // namespace wok::onnx
