// What built the code in a cache entry: the generator's source hash and the
// assembler library. Both go into entry headers and kernel signatures, so a
// rebuilt wok with a changed code generator never loads old machine code.
#pragma once

#include <string_view>

namespace wok::cache {

// A hash of the code generator's sources (jit/x86/, the scalar formula and
// the vector-math coefficients), computed by CMake at configure time; CMake
// re-configures when one of those files changes. "unknown" outside CMake.
std::string_view generator_hash();

// The tool that turned the generator's output into bytes: "asmjit 1.9.0".
std::string_view x86_compiler_id();

}  // namespace wok::cache
