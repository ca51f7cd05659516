#include "wok/runtime/widening.h"

#include <memory>
#include <string>
#include <vector>

#include "wok/runtime/element_cast.h"
#include "wok/runtime/error.h"
#include "wok/runtime/host_allocator.h"
#include "wok/runtime/op_def.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"

namespace wok {

namespace {

constexpr int64_t kConvertGrain = 1 << 16;

template <typename From, typename To>
void convert_range(const From* src, To* dst, int64_t n) {
  if constexpr (std::is_same_v<From, half> && std::is_same_v<To, float>) half_to_float(src, dst, n);
  else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, half>) float_to_half(src, dst, n);
  else if constexpr (std::is_same_v<From, bfloat16> && std::is_same_v<To, float>) bfloat16_to_float(src, dst, n);
  else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, bfloat16>) float_to_bfloat16(src, dst, n);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = element_cast<To>(src[i]);
}

// A buffer from the host allocator, given back on scope exit.
struct Scratch {
  void* data = nullptr;
  size_t bytes = 0;
  explicit Scratch(size_t n) : data(HostAllocator::global().allocate(n == 0 ? 1 : n)), bytes(n == 0 ? 1 : n) {}
  Scratch(Scratch&& o) noexcept : data(o.data), bytes(o.bytes) { o.data = nullptr; }
  Scratch(const Scratch&) = delete;
  ~Scratch() {
    if (data) HostAllocator::global().deallocate(data, bytes);
  }
};

}  // namespace

void convert_elements(DType from, const void* src, DType to, void* dst, int64_t n) {
  if (n <= 0) return;
  visit_any_dtype(from, [&](auto f) {
    visit_any_dtype(to, [&](auto t) {
      using From = decltype(f);
      using To = decltype(t);
      const From* s = static_cast<const From*>(src);
      To* d = static_cast<To*>(dst);
      parallel_for(n, kConvertGrain, [&](int64_t b, int64_t e) { convert_range(s + b, d + b, e - b); });
    });
  });
}

bool operands_in(const KernelContext& ctx, DTypeMask m) {
  for (const TensorRef& t : ctx.inputs)
    if (!in_mask(m, t.dtype)) return false;
  for (const TensorRef& t : ctx.outputs)
    if (!in_mask(m, t.dtype)) return false;
  return true;
}

std::vector<DType> widened_output_dtypes(const OpDef& def, std::span<const DType> widened_inputs, const Attrs& attrs,
                                         std::span<const DType> outputs, DTypeMask native,
                                         const std::function<DType(DType)>& widen) {
  std::vector<DType> rule;
  try {
    rule = def.infer_dtype(widened_inputs, attrs);
  } catch (const Error&) {
    rule.clear();  // the rule refuses the stand-ins: keep each output's own compute dtype
  }
  std::vector<DType> out;
  for (size_t o = 0; o < outputs.size(); ++o)
    out.push_back(rule.size() == outputs.size() && in_mask(native, rule[o]) ? rule[o] : widen(outputs[o]));
  return out;
}

ScalarProgram widened_formula(const OpDef& def, std::span<const DType> inputs, std::span<const DType> outputs,
                              const Attrs& attrs) {
  std::vector<DType> wide_in;
  for (DType t : inputs) wide_in.push_back(compute_dtype(t));
  // An output the rule gives no compute dtype for keeps its own: the
  // program's cast to it then rounds once, as the CPU's cast kernel (which
  // takes every dtype) does from float64 to bfloat16.
  const std::vector<DType> wide_out =
      widened_output_dtypes(def, wide_in, attrs, outputs, kComputeDTypeMask, [](DType t) { return t; });
  FormulaBuilder b(wide_in, wide_out, attrs);
  def.formula(b);
  const ScalarProgram core = b.finish();

  ScalarProgram framed;
  auto push = [&](ScalarInstr in) {
    framed.instrs.push_back(std::move(in));
    return static_cast<int32_t>(framed.instrs.size() - 1);
  };
  auto cast_to = [&](DType t, int32_t value) {
    ScalarInstr c(ScalarOp::kCast, t);
    c.args[0] = value;
    return push(c);
  };
  std::vector<int32_t> value_of(core.instrs.size(), -1);
  for (size_t i = 0; i < core.instrs.size(); ++i) {
    ScalarInstr in = core.instrs[i];
    for (int a = 0; a < scalar_op_arity(in.op); ++a) in.args[a] = value_of[in.args[a]];
    if (in.op == ScalarOp::kInput && inputs[in.index] != in.dtype) {
      const DType wide = in.dtype;
      in.dtype = inputs[in.index];
      value_of[i] = cast_to(wide, push(in));
    } else {
      value_of[i] = push(in);
    }
  }
  for (size_t o = 0; o < core.outputs.size(); ++o) {
    const int32_t v = value_of[core.outputs[o]];
    framed.outputs.push_back(framed.instrs[v].dtype == outputs[o] ? v : cast_to(outputs[o], v));
  }
  return framed;
}

const DeviceWidening& host_widening() {
  static const DeviceWidening* w = new DeviceWidening{
      "CPU",
      [](const KernelContext&, size_t bytes) {
        auto s = std::make_shared<Scratch>(bytes);
        return DeviceWidening::Buffer{s, s->data};
      },
      [](const KernelContext&, const TensorRef& from, const TensorRef& to) {
        convert_elements(from.dtype, from.data, to.dtype, to.data, from.numel());
      },
      [](const KernelContext&, std::vector<std::shared_ptr<void>>& holders) { holders.clear(); }};
  return *w;
}

KernelFn widening_kernel(KernelFn fn, DTypeMask native, std::function<const KernelFn*()> fallback,
                         const DeviceWidening& device) {
  if ((native & kAllDTypeMask) == kAllDTypeMask) return fn;
  DTypeMask widenable = 0;  // the dtypes whose compute dtype fn takes
  for (DType t : kAllDTypes)
    if (in_mask(native, compute_dtype(t))) widenable |= dtype_bit(t);
  return [fn = std::move(fn), native, widenable, fallback = std::move(fallback), device](const KernelContext& ctx) {
    if (operands_in(ctx, native)) return fn(ctx);
    if (!operands_in(ctx, widenable) && fallback)
      if (const KernelFn* other = fallback()) return (*other)(ctx);

    auto widened = [&](DType t) {
      if (in_mask(native, t)) return t;
      const DType w = compute_dtype(t);
      if (!in_mask(native, w))
        throw DTypeError("the " + device.device_name + " kernel of op '" + ctx.op.name() + "' does not take " +
                         std::string(dtype_name(t)));
      return w;
    };
    std::vector<std::shared_ptr<void>> holders;
    auto scratch_for = [&](const TensorRef& t, DType w) {
      DeviceWidening::Buffer b = device.scratch(ctx, static_cast<size_t>(t.numel()) * itemsize(w));
      holders.push_back(std::move(b.holder));
      return TensorRef{b.data, t.shape, w};
    };
    try {
      std::vector<TensorRef> in(ctx.inputs.begin(), ctx.inputs.end());
      std::vector<TensorRef> out(ctx.outputs.begin(), ctx.outputs.end());
      for (TensorRef& t : in) {
        const DType w = widened(t.dtype);
        if (w == t.dtype) continue;
        const TensorRef wide = scratch_for(t, w);
        device.convert(ctx, t, wide);
        t = wide;
      }
      // The outputs in the dtypes the op gives for the widened inputs, so
      // the kernel sees operands its own dtype rule allows.
      std::vector<DType> in_dtypes, out_dtypes;
      for (const TensorRef& t : in) in_dtypes.push_back(t.dtype);
      for (const TensorRef& t : out) out_dtypes.push_back(t.dtype);
      const std::vector<DType> wide_out =
          widened_output_dtypes(ctx.op.def(), in_dtypes, ctx.attrs, out_dtypes, native, widened);
      for (size_t o = 0; o < out.size(); ++o)
        if (wide_out[o] != out[o].dtype) out[o] = scratch_for(out[o], wide_out[o]);
      fn(KernelContext{ctx.op, ctx.attrs, in, out, ctx.device});
      for (size_t o = 0; o < out.size(); ++o)
        if (out[o].dtype != ctx.outputs[o].dtype) device.convert(ctx, out[o], ctx.outputs[o]);
    } catch (...) {
      device.release(ctx, holders);
      throw;
    }
    device.release(ctx, holders);
  };
}

}  // namespace wok
