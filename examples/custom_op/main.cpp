// Registering an op from outside the library: WeightedSum, out = weight * a + b.
#include <cstdio>
#include <vector>

#include <wok/wok.h>

namespace {

void register_weighted_sum() {
  wok::OpDef def;
  def.name = "WeightedSum";
  def.inputs = {"a", "b"};
  def.attrs = {{"weight", wok::AttrType::kFloat, 1.0}};
  def.kind = wok::OpKind::kElementwise;
  def.infer_shape = wok::broadcast_all_inputs;
  def.infer_dtype = [](std::span<const wok::DType> in, const wok::Attrs&) {
    if (in[0] != in[1] || !wok::is_floating(in[0]))
      throw wok::DTypeError("WeightedSum needs two inputs of the same floating dtype");
    return std::vector<wok::DType>{in[0]};
  };
  // The scalar formula: what the JIT compiles and fuses with neighbours.
  def.formula = [](wok::FormulaBuilder& f) {
    wok::Expr a = f.input(0);
    f.output(0, f.attr("weight", a.dtype()) * a + f.input(1));
  };
  def.doc = "weight * a + b";
  wok::register_op(std::move(def));

  // The CPU kernel: float32 only here, same shapes or broadcast b (scalar).
  wok::register_kernel("WeightedSum", wok::DeviceType::kCPU, [](const wok::KernelContext& ctx) {
    const wok::TensorRef& a = ctx.inputs[0];
    const wok::TensorRef& b = ctx.inputs[1];
    const wok::TensorRef& out = ctx.outputs[0];
    if (a.dtype != wok::DType::kFloat32 || a.numel() != out.numel())
      throw wok::DTypeError("this WeightedSum kernel takes float32 a of the output's shape");
    const float w = static_cast<float>(ctx.attrs.get_float("weight"));
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    float* po = out.as<float>();
    const int64_t n = out.numel();
    const bool b_scalar = b.numel() == 1;
    wok::parallel_for(n, 1 << 15, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = w * pa[i] + (b_scalar ? pb[0] : pb[i]);
    });
  });
}

wok::Tensor weighted_sum(const wok::Tensor& a, const wok::Tensor& b, double weight) {
  return wok::call1("WeightedSum", {a, b}, {{"weight", weight}});
}

}  // namespace

int main() {
  register_weighted_sum();
  wok::Tensor a = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  wok::Tensor b = wok::ones({2, 2});
  wok::Tensor y = weighted_sum(a, b, 0.5) * 2.0f;  // fuses with the multiply under the JIT
  std::printf("WeightedSum(a, b; weight=0.5) * 2 = %s\n", y.str().c_str());

  // Errors name the op, the shapes and the dtypes.
  try {
    weighted_sum(a, wok::ones({3}), 0.5);
  } catch (const wok::Error& e) {
    std::printf("error, as expected: %s\n", e.what());
  }
  try {
    wok::register_kernel("WeightedSum", wok::DeviceType::kCPU, [](const wok::KernelContext&) {});
  } catch (const wok::Error& e) {
    std::printf("error, as expected: %s\n", e.what());
  }
  return 0;
}
