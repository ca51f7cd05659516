#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/op_registry.h"

namespace wok::cpu {

// One entry point per instruction-set variant; runtime/kernels/
// cpu_dispatch.cpp picks the variant for this host.
void WOK_ISA_CONCAT(register_kernels_, WOK_CPU_ISA)(OpRegistry& r) {
  WOK_ISA_NS::register_formula_kernel(r);
  WOK_ISA_NS::register_unary_formula_kernels(r);  // replace the derived ones
  WOK_ISA_NS::register_binary_formula_kernels(r);
  WOK_ISA_NS::register_fill_kernels(r);
  WOK_ISA_NS::register_reduction_kernels(r);
  WOK_ISA_NS::register_movement_kernels(r);
  WOK_ISA_NS::register_shape_kernels(r);
  WOK_ISA_NS::register_linalg_kernels(r);
  WOK_ISA_NS::register_matmul_kernels(r);
  WOK_ISA_NS::register_pool_kernels(r);
  WOK_ISA_NS::register_conv_kernels(r);
  WOK_ISA_NS::register_indexing_kernels(r);
  WOK_ISA_NS::register_scan_kernels(r);
  WOK_ISA_NS::register_sort_kernels(r);
}

}  // namespace wok::cpu
