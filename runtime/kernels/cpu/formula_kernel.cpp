// The precompiled CPU kernel of every elementwise op without one of its own
// (the built-in unary ops compile theirs: unary_formula_kernels.cpp): it
// evaluates the op's
// scalar formula, the same program the JIT compiles, so an op's math is
// written once (Note [One formula per op] in runtime/op_def.h).
//
// Note [Evaluating a formula over blocks]
// The output range is split over the thread pool; each run of it that lies
// within one innermost row is cut into blocks of 256 elements (2048 for
// programs of up to 4 instructions), and the
// program runs one instruction at a time over a block: each primitive is a
// loop the compiler vectorizes (primitive_loops.h), its operands and result
// stay in L1. Contiguous inputs are read in place and the last instruction
// writes straight into the output, so a single-primitive op (exp, add) costs
// about what a hand-written loop does. A composite makes one pass per
// instruction over a block where a fused kernel makes one (gelu ran at a
// third of memory bandwidth this way, hence the compiled unary kernels):
// for user ops the JIT is the fast path, this the reference and fallback.
#include "wok/runtime/kernels/cpu/isa.h"

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "wok/runtime/kernels/cpu/primitive_loops.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/scalar_formula.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/widening.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// Elements per block: scratch of a long program stays in L1; a short one
// (add: inputs read in place, result written in place) takes longer blocks,
// so the per-block dispatch weighs less.
constexpr int64_t kBlock = 256;
constexpr int64_t kShortProgramBlock = 2048;
constexpr size_t kShortProgram = 4;
constexpr int kMaxInputs = 4;

// The dtypes the formula loops are instantiated for: the compute dtypes
// and uint64, which has no wider type to compute in (its arithmetic wraps
// like the other integers'; its shifts and bitwise ops are ONNX's).
constexpr DTypeMask kFormulaDTypes = kComputeAndUInt64DTypeMask;

ScalarProgram build_program(const KernelContext& ctx) {
  const OpDef& def = ctx.op.def();
  if (!def.formula) throw RegistryError("op '" + ctx.op.name() + "' has no formula for the precompiled kernel to evaluate");
  std::vector<DType> in_t, out_t;
  for (const TensorRef& t : ctx.inputs) in_t.push_back(t.dtype);
  for (const TensorRef& t : ctx.outputs) out_t.push_back(t.dtype);
  FormulaBuilder b(in_t, out_t, ctx.attrs);
  def.formula(b);
  return b.finish();
}

// Copies n elements of dtype t read with stride `stride` (0: one value
// repeated) into dst.
void gather(DType t, void* dst, const std::byte* src, int64_t stride, int64_t n) {
  visit_dtype<kFormulaDTypes>(t, [&](auto tag) {
    using T = decltype(tag);
    const T* s = reinterpret_cast<const T*>(src);
    T* d = static_cast<T*>(dst);
    if (stride == 0) {
      const T v = s[0];
      for (int64_t i = 0; i < n; ++i) d[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
    }
  });
}

void fill_constant(const Scalar& value, DType t, void* dst, int64_t n) {
  visit_dtype<kFormulaDTypes>(t, [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    T* d = static_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  });
}

void run_instr(const ScalarProgram& p, const ScalarInstr& in, void* out, const std::vector<const void*>& values,
               int64_t n) {
  const void* args[3] = {nullptr, nullptr, nullptr};
  for (int a = 0; a < scalar_op_arity(in.op); ++a) args[a] = values[in.args[a]];
  if (in.op == ScalarOp::kCast) {
    visit_dtype<kFormulaDTypes>(p.instrs[in.args[0]].dtype, [&](auto from) {
      visit_dtype<kFormulaDTypes>(in.dtype, [&](auto to) {
        cast_loop(static_cast<decltype(to)*>(out), static_cast<const decltype(from)*>(args[0]), n);
      });
    });
    return;
  }
  // Operand 0's dtype picks the loop (a comparison's result is bool); a
  // select's is its branches', the result's.
  const DType t = in.op == ScalarOp::kSelect ? in.dtype : p.instrs[in.args[0]].dtype;
  visit_dtype<kFormulaDTypes>(t, [&](auto tag) { primitive_loop<decltype(tag)>(in.op, out, args, n); });
}

template <int N>  // operands: the output, then N - 1 inputs
void evaluate(const KernelContext& ctx, const ScalarProgram& p) {
  const TensorRef& y = ctx.outputs[0];
  const int64_t n = y.numel();
  if (n == 0) return;
  std::array<const Shape*, N - 1> shapes;
  for (int k = 0; k < N - 1; ++k) shapes[k] = ctx.inputs[k].shape;
  const StridedLayout<N> l = make_layout<N>(*y.shape, shapes);
  const size_t count = p.instrs.size();
  const int32_t last = static_cast<int32_t>(count) - 1;

  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    // One block-sized slot per instruction (8 bytes covers every dtype).
    const int64_t block = count <= kShortProgram ? kShortProgramBlock : kBlock;
    std::unique_ptr<uint64_t[]> scratch(new uint64_t[count * block]);
    auto slot = [&](size_t i) { return static_cast<void*>(scratch.get() + i * block); };
    std::vector<const void*> values(count, nullptr);
    for (size_t i = 0; i < count; ++i)
      if (p.instrs[i].op == ScalarOp::kConst) {
        fill_constant(p.instrs[i].constant, p.instrs[i].dtype, slot(i), block);
        values[i] = slot(i);
      }
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      for (int64_t s = 0; s < len; s += block) {
        const int64_t m = std::min(block, len - s);
        for (size_t i = 0; i < count; ++i) {
          const ScalarInstr& in = p.instrs[i];
          if (in.op == ScalarOp::kConst) continue;
          if (in.op == ScalarOp::kInput) {
            const int k = in.index;
            const int64_t stride = l.inner_stride(1 + k);
            const std::byte* base = static_cast<const std::byte*>(ctx.inputs[k].data) +
                                    (off[1 + k] + s * stride) * static_cast<int64_t>(itemsize(in.dtype));
            if (stride == 1) {
              values[i] = base;
            } else {
              gather(in.dtype, slot(i), base, stride, m);
              values[i] = slot(i);
            }
            continue;
          }
          // The last instruction is output 0's value: it writes in place.
          void* dst = slot(i);
          if (static_cast<int32_t>(i) == last && p.outputs[0] == last)
            dst = static_cast<std::byte*>(y.data) + (off[0] + s) * static_cast<int64_t>(itemsize(y.dtype));
          run_instr(p, in, dst, values, m);
          values[i] = dst;
        }
        for (size_t o = 0; o < p.outputs.size(); ++o) {
          const TensorRef& out = ctx.outputs[o];
          const size_t bytes = itemsize(out.dtype);
          std::byte* dst = static_cast<std::byte*>(out.data) + (off[0] + s) * static_cast<int64_t>(bytes);
          if (values[p.outputs[o]] != dst) std::memcpy(dst, values[p.outputs[o]], m * bytes);
        }
      }
    });
  });
}

// The program of an op without attributes, by op and dtypes, per thread:
// building one costs about 0.2 us, as much as a 16-element kernel (an op
// with attributes may bake them in as constants, so it is built each time).
const ScalarProgram& program_for(const KernelContext& ctx, ScalarProgram& built) {
  if (ctx.attrs.size() != 0) return built = build_program(ctx);
  const RegisteredOp* op = &ctx.op;  // ops are never freed: the address is their identity
  std::string key(reinterpret_cast<const char*>(&op), sizeof op);
  key.push_back(static_cast<char>(ctx.inputs.size()));
  for (const TensorRef& t : ctx.inputs) key.push_back(static_cast<char>(t.dtype));
  for (const TensorRef& t : ctx.outputs) key.push_back(static_cast<char>(t.dtype));
  thread_local std::unordered_map<std::string, ScalarProgram> programs;
  auto it = programs.find(key);
  if (it == programs.end()) it = programs.emplace(std::move(key), build_program(ctx)).first;
  return it->second;
}

// A program that only casts its one input (the cast op): any pair of
// dtypes, converted once (a cast to float16 from float64 must not round
// through float32).
bool is_plain_cast(const ScalarProgram& p) {
  if (p.outputs.size() != 1 || p.instrs.empty() || p.instrs[0].op != ScalarOp::kInput) return false;
  if (p.instrs.size() == 1) return p.outputs[0] == 0;  // a cast to the input's own dtype
  return p.instrs.size() == 2 && p.instrs[1].op == ScalarOp::kCast && p.outputs[0] == 1;
}

void compute_formula_kernel(const KernelContext& ctx) {
  ScalarProgram built;
  const ScalarProgram& p = program_for(ctx, built);
  switch (ctx.inputs.size()) {
    case 1: return evaluate<2>(ctx, p);
    case 2: return evaluate<3>(ctx, p);
    case 3: return evaluate<4>(ctx, p);
    case 4: return evaluate<5>(ctx, p);
    default:
      throw RegistryError("the precompiled formula kernel takes 1 to " + std::to_string(kMaxInputs) +
                          " inputs; op '" + ctx.op.name() + "' has " + std::to_string(ctx.inputs.size()));
  }
}

// Operands of the compute dtypes run as they are; a cast runs natively
// between any pair; anything else through the widening adapter (Note [The
// widening adapter] in runtime/widening.h).
void formula_kernel(const KernelContext& ctx) {
  if (operands_in(ctx, kFormulaDTypes)) return compute_formula_kernel(ctx);
  ScalarProgram built;
  if (ctx.inputs.size() == 1 && ctx.outputs.size() == 1 && is_plain_cast(program_for(ctx, built))) {
    const TensorRef& x = ctx.inputs[0];
    const TensorRef& y = ctx.outputs[0];
    return convert_elements(x.dtype, x.data, y.dtype, y.data, y.numel());
  }
  static const KernelFn widened = widening_kernel(compute_formula_kernel, kFormulaDTypes);
  widened(ctx);
}

}  // namespace

void register_formula_kernel(OpRegistry& r) {
  r.set_formula_kernel(DeviceType::kCPU, formula_kernel, kAllDTypeMask);
}

}  // namespace wok::cpu::WOK_ISA_NS
