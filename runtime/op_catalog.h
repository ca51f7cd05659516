// What the registry knows about one op, gathered for diagnosis: the schema,
// the dtypes its rule accepts, the devices with kernels and how each JIT
// treats it (wok::describe_op, the wok-ops tool; docs/troubleshooting.md's
// "custom op not recognised" and "runs on one device, fails on another").
//
// Built from the registry alone. How the JITs treat the op is jit/ knowledge,
// which runtime/ never includes: jit/op_fusion.h fills OpInfo::jit, and the
// frontend puts the two together.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/device.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/op_def.h"

namespace wok {

class RegisteredOp;

// One input dtype the dtype rule accepts, with every input of that dtype,
// and the output dtypes it gives.
struct DTypeCase {
  DType input;
  std::vector<DType> outputs;
};

struct KernelInfo {
  DeviceType device;
  bool from_formula;  // the device's formula kernel, which evaluates the op's formula
};

// How a JIT treats an op (jit/passes/fusion.cpp, jit/op_fusion.h).
enum class JitTreatment : uint8_t {
  kFusesElementwise,  // joins a fused kernel with its elementwise neighbours
  kFusesReduction,    // a generated reduction kernel, its producers and consumers fused in
  kGemmEpilogue,      // a generated GEMM kernel, its elementwise consumers fused as the epilogue
  kView,              // no kernel runs: the output is the input's buffer
  kMovement,          // not fused: its own copy kernel between fused kernels
  kConstant,          // folded: a launch parameter of the kernels that read it
  kOwnKernel,         // not fused: its registered kernel runs between fused kernels
};

// A few words for listings: "elementwise", "reduction", "gemm+epilogue", ...
std::string_view jit_treatment_label(JitTreatment t);

// How the JIT for one device treats the op at some of its input dtypes.
struct JitInfo {
  DeviceType device;
  std::string target;         // the generator: "x86", "cuda"
  JitTreatment treatment;
  std::vector<DType> dtypes;  // input dtypes this applies to; empty: all of them
  std::string note;           // when it applies, or why not
};

struct OpInfo {
  std::string name;
  OpKind kind = OpKind::kOpaque;
  std::vector<std::string> inputs;
  bool variadic_inputs = false;
  std::vector<std::string> outputs;
  std::vector<AttrSpec> attrs;
  std::string doc;
  bool builtin = false;
  bool has_formula = false;
  bool output_aliases_input = false;
  // The dtype rule probed with every input of one dtype: how the named
  // functions (wok::add, wok::where's a and b) call it after promoting the
  // inputs; wok::call passes dtypes as given, hence input_dtypes.
  std::vector<DTypeCase> dtypes;
  // Per input, the dtypes the rule accepts when the inputs differ (every
  // combination probed); empty when that adds nothing to `dtypes` (where's
  // cond is bool whatever a and b are).
  std::vector<std::vector<DType>> input_dtypes;
  // Attributes whose value sets the output dtype (cast's dtype, full's value).
  std::vector<std::string> dtype_attrs;
  std::vector<KernelInfo> kernels;
  std::vector<JitInfo> jit;  // filled by jit::describe_fusion, in device order
};

// Everything but `jit`, for an op of the global registry.
OpInfo op_info(const RegisteredOp& op);

// The attributes of `def` the way the probes bind them: defaults, and for a
// required attribute a stand-in of its type (float32, 0, empty list).
Attrs placeholder_attrs(const OpDef& def);

// Readable text, several lines, ending in a newline (wok-ops NAME).
std::string op_info_text(const OpInfo& info);

// Up to k of `candidates` close to `name`, nearest first: a small edit
// distance (case-insensitive, a swap of neighbours counts once), or one name
// inside the other ("pool" finds max_pool2d). Empty when none is close.
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       size_t k = 3);
// The same over the global registry's ops.
std::vector<std::string> nearest_op_names(std::string_view name, size_t k = 3);

// "unknown op 'sofplus' (did you mean 'softplus'?); ..." with what to do next.
std::string unknown_op_message(std::string_view name, const std::vector<std::string>& suggestions);

}  // namespace wok
