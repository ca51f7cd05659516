// FusedKernelSpec: one fused group of elementwise ops, as the code
// generators see it. It is shape-generic: it fixes the rank of the
// (collapsed) iteration space, which operands broadcast along which dims,
// the dtypes and the scalar program, but no sizes. Two groups with equal
// specs share one compiled kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::jit {

// Bump when the meaning of a spec or the kernel ABI changes: it is part of
// every kernel signature, so old cached kernels stop matching.
inline constexpr int kKernelAbiVersion = 1;

struct FusedKernelSpec {
  int rank = 1;  // dims of the iteration space after merging; >= 1
  // Inputs read from memory. broadcast[i][d] is true when input i does not
  // advance along dim d (stride 0); the inner dim's flag decides whether the
  // generated loop loads a vector or a broadcast scalar.
  std::vector<DType> input_dtypes;
  std::vector<std::vector<bool>> input_broadcast;
  // Scalars passed by value at launch (constants of the traced program).
  std::vector<DType> param_dtypes;
  // The fused computation. kInput(i) reads input i for i < inputs, and
  // param (i - inputs) above that. program.outputs are written, contiguous.
  ScalarProgram program;

  int num_inputs() const { return static_cast<int>(input_dtypes.size()); }
  int num_params() const { return static_cast<int>(param_dtypes.size()); }
  int num_outputs() const { return static_cast<int>(program.outputs.size()); }
  DType output_dtype(int i) const { return program.instrs[program.outputs[i]].dtype; }
  bool inner_broadcast(int input) const { return input_broadcast[input][rank - 1]; }

  // Canonical bytes: everything above, nothing about sizes.
  std::string signature() const;
  std::string str() const;  // readable, for dumps and errors
};

// What a generated kernel receives at launch.
struct KernelArgs {
  void* const* ptrs;        // inputs then outputs, base pointers
  const uint64_t* params;   // one 8-byte slot per param, value in the low bytes
  const int64_t* shape;     // [rank]
  const int64_t* strides;   // [(inputs + outputs) * rank], in elements
};

// Processes flat output elements [begin, end); the runtime splits ranges
// across threads.
using KernelFn = void (*)(const KernelArgs* args, int64_t begin, int64_t end);

// A param slot holding `value` as `dtype`.
uint64_t param_bits(DType dtype, const Scalar& value);

}  // namespace wok::jit
