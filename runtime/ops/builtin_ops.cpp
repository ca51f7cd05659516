#include "wok/runtime/op_registry.h"

namespace wok {

namespace ops {
void register_elementwise_ops(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_movement_ops(OpRegistry& r);
void register_linalg_ops(OpRegistry& r);
void register_creation_ops(OpRegistry& r);
void register_pool_ops(OpRegistry& r);
void register_conv_ops(OpRegistry& r);
void register_collective_ops(OpRegistry& r);
void register_indexing_ops(OpRegistry& r);
void register_scan_ops(OpRegistry& r);
}  // namespace ops

void register_builtin_ops(OpRegistry& registry) {
  ops::register_elementwise_ops(registry);
  ops::register_reduction_ops(registry);
  ops::register_movement_ops(registry);
  ops::register_linalg_ops(registry);
  ops::register_creation_ops(registry);
  ops::register_pool_ops(registry);
  ops::register_conv_ops(registry);
  ops::register_collective_ops(registry);
  ops::register_indexing_ops(registry);
  ops::register_scan_ops(registry);
}

}  // namespace wok
