// Convolutions (ONNX Conv and ConvTranspose in NCHW). Opaque ops: the
// precompiled kernels are runtime/kernels/cpu/conv_kernels.cpp; under the
// JIT a conv2d is an implicit GEMM on the generated micro-kernels (Note
// [Convolution as a GEMM] in jit/gemm_lowering.cpp).
#include "wok/runtime/conv_geometry.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

// stride, padding (before, then after), dilation and groups over `dims`
// spatial dims.
std::vector<AttrSpec> conv_attrs(size_t dims) {
  return {{"stride", AttrType::kInts, std::vector<int64_t>(dims, 1)},
          {"padding", AttrType::kInts, std::vector<int64_t>(2 * dims, 0)},
          {"dilation", AttrType::kInts, std::vector<int64_t>(dims, 1)},
          {"groups", AttrType::kInt, int64_t{1}}};
}

DTypeFn float_operands(const char* what) {
  return [what](std::span<const DType> in, const Attrs&) {
    DType t = common_dtype(in);
    if (!is_floating(t))
      throw DTypeError(std::string(what) + " is defined for floating-point dtypes, got " + std::string(dtype_name(t)));
    return one(t);
  };
}

// An opaque convolution op whose output shape is `geometry`'s.
OpDef conv_op(const char* name, std::vector<AttrSpec> attrs,
              ConvGeometry (*geometry)(const Shape&, const Shape&, const Attrs&), const char* doc) {
  OpDef def;
  def.name = name;
  def.inputs = {"x", "weight"};
  def.attrs = std::move(attrs);
  def.kind = OpKind::kOpaque;
  def.infer_shape = [geometry](std::span<const Shape> in, const Attrs& a) {
    return std::vector<Shape>{geometry(in[0], in[1], a).output_shape()};
  };
  def.infer_dtype = float_operands(name);
  def.doc = doc;
  return def;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r.add(conv_op("conv2d", conv_attrs(2), ConvGeometry::conv2d,
                "2-D convolution, NCHW: x [N, C, H, W] * weight [O, C / groups, KH, KW]"));
  r.add(conv_op("conv1d", conv_attrs(1), ConvGeometry::conv2d,
                "1-D convolution: x [N, C, L] * weight [O, C / groups, K] (a conv2d of height 1)"));
  std::vector<AttrSpec> transposed = conv_attrs(2);
  transposed.push_back({"output_padding", AttrType::kInts, std::vector<int64_t>{0, 0}});
  r.add(conv_op("conv_transpose2d", std::move(transposed), ConvGeometry::conv_transpose2d,
                "transposed 2-D convolution, NCHW: x [N, C, H, W], weight [C, O / groups, KH, KW]"));
}

}  // namespace wok::ops
