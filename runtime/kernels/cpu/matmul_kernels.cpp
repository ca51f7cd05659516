// PLACEHOLDER: being written.
#include "wok/runtime/kernels/cpu/isa.h"
namespace wok::cpu::WOK_ISA_NS {
void register_matmul_kernels(OpRegistry&) {}
}
