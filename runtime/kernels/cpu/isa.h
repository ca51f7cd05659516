// Each file in runtime/kernels/cpu/ is compiled once per instruction set
// (see CMakeLists.txt); WOK_CPU_ISA names the variant and WOK_ISA_NS puts
// each variant's symbols in their own namespace.
#pragma once

#ifndef WOK_CPU_ISA
#error "runtime/kernels/cpu/ files are built by CMake with WOK_CPU_ISA set"
#endif

#define WOK_ISA_CONCAT2(a, b) a##b
#define WOK_ISA_CONCAT(a, b) WOK_ISA_CONCAT2(a, b)
#define WOK_ISA_NS WOK_ISA_CONCAT(isa_, WOK_CPU_ISA)

namespace wok {
class OpRegistry;
namespace cpu {
inline namespace WOK_ISA_NS {
// One per kernel family; register_kernels.cpp calls them all.
void register_formula_kernel(OpRegistry& r);  // every elementwise op
void register_unary_formula_kernels(OpRegistry& r);  // the built-in unary ops, compiled
void register_binary_formula_kernels(OpRegistry& r);  // and the binary ones
void register_fill_kernels(OpRegistry& r);
void register_reduction_kernels(OpRegistry& r);
void register_movement_kernels(OpRegistry& r);
void register_shape_kernels(OpRegistry& r);  // resize, range
void register_matmul_kernels(OpRegistry& r);
void register_linalg_kernels(OpRegistry& r);  // det
void register_pool_kernels(OpRegistry& r);
void register_conv_kernels(OpRegistry& r);
void register_indexing_kernels(OpRegistry& r);
void register_scan_kernels(OpRegistry& r);
void register_sort_kernels(OpRegistry& r);
}  // inline namespace WOK_ISA_NS
}  // namespace cpu
}  // namespace wok
