#include "wok/runtime/cuda/cuda_formula_kernel.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/cuda/cuda_kernels.h"
#include "wok/runtime/cuda/ew_args.h"
#include "wok/runtime/cuda/formula_source.h"
#include "wok/runtime/error.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/signature.h"
#include "wok/runtime/widening.h"

namespace wok::cuda {

// Note [CUDA formula kernels]
// The precompiled CUDA elementwise kernels used to be a hand-kept list of
// ops spelled again in .cu files, composites included; now each is derived
// from the op's formula, as on the CPU (runtime/kernels/cpu/
// formula_kernel.cpp). A kernel is one program at one set of dtypes: the
// formula builder bakes attribute values (clamp's bounds) into the program
// as constants, so the key is the program's signature with the input
// dtypes, not the op's name. Lookup is by the full signature (the kernel is
// named after its hash, for profilers and dumps); a miss renders the
// source, compiles it with NVRTC for the device's architecture and loads
// it, holding only that key's lock, so racing threads wait for one compile
// and other keys compile meanwhile. A failed build is remembered and
// reported to every later call. Kernels stay loaded until the process
// ends (Note [CUDA teardown] in cuda_allocator.h).
//
// Compiled at run time, these need NVRTC where nvcc-built fatbins did not;
// the error says so when it is missing. They are compiled per program, not
// per module, and have no disk cache (that lives in cache/, above the
// runtime): a process pays one NVRTC compile per (op, dtypes, attributes)
// it runs on the precompiled CUDA path.

namespace {

// `op` as part of a C identifier.
std::string identifier(std::string_view op) {
  std::string out;
  for (char c : op) out.push_back((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
  return out;
}

struct CompiledKernel {
  std::mutex mu;  // held while building: racing threads wait for one compile
  bool built = false;
  CUfunction fn = nullptr;
  std::string error;  // of a failed build
};

struct KernelTable {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::unique_ptr<CompiledKernel>> all;  // (device, signature)

  CompiledKernel& get(int device, const std::string& signature) {
    std::lock_guard lock(mu);
    auto& k = all[{device, signature}];
    if (!k) k = std::make_unique<CompiledKernel>();
    return *k;
  }
};

KernelTable& kernels() {
  static KernelTable* t = new KernelTable();  // leaked: Note [CUDA teardown] in cuda_allocator.h
  return *t;
}

std::string dtypes_str(std::span<const DType> dtypes) {
  std::string out;
  for (DType t : dtypes) out += (out.empty() ? "" : ", ") + std::string(dtype_name(t));
  return out;
}

// Renders, compiles and loads the kernel; the error text when that fails.
std::string build(CompiledKernel& k, int device, std::string_view op, const ScalarProgram& program,
                  std::span<const DType> input_dtypes) {
  absl::StatusOr<FormulaKernelSource> src = render_formula_kernel(op, program, input_dtypes);
  if (!src.ok()) return std::string(src.status().message());
  set_device(device);
  absl::StatusOr<CudaBinary> bin = compile_cuda(src->source, src->name, device_info(device).arch());
  if (!bin.ok()) return "building it with NVRTC failed: " + std::string(bin.status().message());
  CUmodule module = nullptr;
  CUresult r = driver().cuModuleLoadData(&module, bin->image.data());
  if (r != kSuccess) return "cuModuleLoadData(" + src->name + "): " + error_text(r);
  r = driver().cuModuleGetFunction(&k.fn, module, src->name.c_str());
  if (r != kSuccess) return "cuModuleGetFunction(" + src->name + "): " + error_text(r);
  return "";
}

CUfunction formula_function(int device, const KernelContext& ctx, const ScalarProgram& program,
                            std::span<const DType> input_dtypes) {
  CompiledKernel& k = kernels().get(device, formula_kernel_signature(program, input_dtypes));
  std::lock_guard lock(k.mu);
  if (!k.built) {
    k.error = build(k, device, ctx.op.name(), program, input_dtypes);
    k.built = true;
  }
  if (!k.error.empty())
    throw DeviceError("cuda:" + std::to_string(device) + ": cannot build the CUDA kernel of '" + ctx.op.name() +
                      "' on (" + dtypes_str(input_dtypes) + "): " + k.error);
  return k.fn;
}

}  // namespace

std::string formula_kernel_signature(const ScalarProgram& program, std::span<const DType> input_dtypes) {
  std::string out = "wok-cuda-formula-kernel;";
  for (DType t : input_dtypes) out.push_back(static_cast<char>(t));
  out.push_back(';');
  program.append_signature(out);
  return out;
}

absl::StatusOr<FormulaKernelSource> render_formula_kernel(std::string_view op, const ScalarProgram& program,
                                                          std::span<const DType> input_dtypes) {
  const size_t nin = input_dtypes.size();
  if (nin < 1 || nin > static_cast<size_t>(kEwMaxInputs))
    return absl::UnimplementedError("the CUDA formula kernel takes 1 to " + std::to_string(kEwMaxInputs) +
                                    " inputs; op '" + std::string(op) + "' has " + std::to_string(nin));
  if (program.outputs.size() != 1)
    return absl::UnimplementedError("the CUDA formula kernel writes one output; op '" + std::string(op) + "' has " +
                                    std::to_string(program.outputs.size()));
  FormulaKernelSource k;
  k.name = "wok_" + identifier(op);
  for (DType t : input_dtypes) k.name.append("_").append(dtype_abbr(t));
  k.name.append("_").append(hash128(formula_kernel_signature(program, input_dtypes)).hex().substr(0, 12));

  absl::StatusOr<RenderedStatements> body =
      render_statements(program, [](int32_t index) { return std::string("x").append(std::to_string(index)); }, "    ");
  if (!body.ok())
    return absl::UnimplementedError("op '" + std::string(op) + "' has no CUDA kernel on (" +
                                    dtypes_str(input_dtypes) + "): " + std::string(body.status().message()));
  const int32_t result = program.outputs[0];
  std::string types(cuda_type(program.instrs[result].dtype)), params;
  for (size_t i = 0; i < nin; ++i) {
    const std::string t(cuda_type(input_dtypes[i]));
    types += ", " + t;
    params += (i ? ", const " : "const ") + t + " x" + std::to_string(i);
  }
  const std::pair<std::string_view, std::string> slots[] = {
      {"KERNEL_NAME", k.name}, {"TYPES", types}, {"PARAMS", params}, {"BODY", body->text}, {"RESULT", body->outputs[0]}};
  absl::StatusOr<std::string> source = fill_template("templates/formula_kernel.cu.in", slots);
  if (!source.ok()) return source.status();
  k.source = "// " + k.name + ": the formula of '" + std::string(op) + "', rendered from templates/formula_kernel.cu.in\n" +
             as_comment(program.str()) + *source;
  return k;
}

void formula_kernel(const KernelContext& ctx) {
  const OpDef& def = ctx.op.def();
  if (!def.formula) throw RegistryError("op '" + ctx.op.name() + "' has no formula for the CUDA kernel to render");
  if (ctx.outputs.size() != 1)
    throw DeviceError("the CUDA formula kernel writes one output; op '" + ctx.op.name() + "' has " +
                      std::to_string(ctx.outputs.size()));
  std::vector<DType> in_t, out_t;
  for (const TensorRef& t : ctx.inputs) in_t.push_back(t.dtype);
  for (const TensorRef& t : ctx.outputs) out_t.push_back(t.dtype);
  // Storage dtypes compute as the CPU's widening adapter computes them.
  const ScalarProgram program = widened_formula(def, in_t, out_t, ctx.attrs);

  EwArgs a{};
  a.out = ctx.outputs[0].data;
  fill_layout(a, *ctx.outputs[0].shape, ctx.inputs, ctx.op.name());
  if (a.n == 0) return;  // nothing to compute: no kernel, no NVRTC
  launch_ew(ctx, formula_function(ctx.device.index, ctx, program, in_t), a, ctx.op.name());
}

}  // namespace wok::cuda
