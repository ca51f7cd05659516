#include "wok/frontend/op_info_api.h"

#include "wok/jit/op_fusion.h"
#include "wok/runtime/op_registry.h"

namespace wok {

std::vector<std::string> op_names() { return OpRegistry::global().names(); }

OpInfo op_info(std::string_view name) {
  const RegisteredOp& op = get_op(name);  // the did-you-mean error
  OpInfo info = op_info(op);
  info.jit = jit::describe_fusion(op, info);  // runtime/ cannot ask jit/ itself
  return info;
}

std::string describe_op(std::string_view name) { return op_info_text(op_info(name)); }

}  // namespace wok
